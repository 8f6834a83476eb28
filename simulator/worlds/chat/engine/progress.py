"""What a chat run already holds, read back as its days' transcripts (a resume, a fork)."""

from __future__ import annotations

from dataclasses import dataclass, field

from simulator.engine.ports import Progress
from simulator.worlds.chat.prompting.transcript import Line


@dataclass
class ChatProgress:
    """The stored transcript by day, so a resumed run continues exactly where it stopped."""

    lines_by_day: dict[int, list[Line]] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    messages: int = 0
    last_speaker: str | None = None
    calls: list[dict] = field(default_factory=list)  # the ledger, for replaying finished calls
    last_own: dict | None = None  # the last message this run stored (not a fork's shared one)

    @classmethod
    def of(cls, progress: Progress, run_id: str) -> ChatProgress:
        """The recorder's progress (messages in transcript order, a fork's shared ones first)."""
        found = cls(summaries=list(progress.summaries), calls=progress.calls)
        for doc in progress.messages:
            found.lines_by_day.setdefault(doc["day"], []).append(Line(doc["speaker"], doc["text"]))
            found.messages += 1
            found.last_speaker = doc["speaker"]
            if doc.get("conversation_id") == run_id:
                found.last_own = doc
        return found
