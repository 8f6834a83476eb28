"""A group chat's rows for `conversation show` (simulator/services/transcripts.py): its
messages and day summaries, a fork's shared prefix first."""

from __future__ import annotations

from simulator.store import lineage
from simulator.store.store import Store


def rows(store: Store, doc: dict) -> dict[str, list[dict]]:
    messages, summaries = lineage.full_transcript(store, doc)
    return {"messages": messages, "summaries": summaries}
