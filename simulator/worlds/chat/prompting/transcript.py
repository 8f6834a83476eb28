"""What each participant is sent: pure functions from a day's record to chat messages."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from simulator.prompting.templates import fill, load_template

RESEARCHER = "Researcher"
REMEMBER = "What you remember (your memory stream, most relevant first):"
NOTHING_RECALLED = "(nothing yet)"


@dataclass(frozen=True)
class Line:
    speaker: str
    text: str


def day_opening(starting_message: str, summaries: Sequence[str]) -> str:
    """The researcher's starting message followed by every earlier day's summary."""
    parts = [starting_message.strip()]
    for day, summary in enumerate(summaries, start=1):
        parts.append(f"Day {day} summary:\n{summary.strip()}")
    return "\n\n".join(parts)


def with_memories(system_prompt: str, recalled: Sequence[str]) -> str:
    """An agent's system prompt with what its memory stream recalled for this turn, at its end:
    the chat history that follows stays the day's transcript, as without a stream."""
    shown = "\n".join(f"- {text}" for text in recalled) or NOTHING_RECALLED
    return f"{system_prompt.rstrip()}\n\n{REMEMBER}\n{shown}"


def agent_messages(
    system_prompt: str,
    opening: str,
    lines: Sequence[Line],
    me: str,
    speaker_format: str = "prefix",
) -> list[dict]:
    """System prompt, the opening, then the day: own lines as assistant, others' as `Name: text`.

    Consecutive user turns are merged so strict chat templates (user/assistant alternation)
    accept the conversation. `speaker_format="name_field"` sends what autogen's GroupChat sent
    instead (named_messages).
    """
    if speaker_format == "name_field":
        return named_messages(system_prompt, opening, lines, me)
    messages: list[dict] = [{"role": "system", "content": system_prompt}]
    _append(messages, "user", f"{RESEARCHER}: {opening}")
    for line in lines:
        if line.speaker == me:
            _append(messages, "assistant", line.text)
        else:
            _append(messages, "user", f"{line.speaker}: {line.text}")
    if messages[-1]["role"] == "assistant":
        _append(messages, "user", f"{RESEARCHER}: {me}, it is your turn again.")
    return messages


def api_name(speaker: str) -> str:
    """A speaker's name as OpenAI's `name` field accepts it (letters, digits, _ and -, at most
    64), the way autogen normalised names: anything else becomes `_`."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", speaker)[:64]


def named_messages(system_prompt: str, opening: str, lines: Sequence[Line], me: str) -> list[dict]:
    """What autogen's GroupChat (pyautogen 0.2) sent an agent: its system message, then every
    message of the day as it was broadcast, one message each and never merged. The others'
    messages, the researcher's opening included, are role user with the raw text and the speaker
    in `name`; the agent's own earlier replies are role assistant without a name (autogen stored
    what an agent sent as a plain string). Nothing is added when the agent spoke last."""
    messages: list[dict] = [{"role": "system", "content": system_prompt}]
    messages.append({"role": "user", "content": opening, "name": api_name(RESEARCHER)})
    for line in lines:
        if line.speaker == me:
            messages.append({"role": "assistant", "content": line.text})
        else:
            messages.append({"role": "user", "content": line.text, "name": api_name(line.speaker)})
    return messages


def _append(messages: list[dict], role: str, content: str) -> None:
    if messages and messages[-1]["role"] == role and role != "system":
        messages[-1] = {"role": role, "content": messages[-1]["content"] + "\n\n" + content}
    else:
        messages.append({"role": role, "content": content})


def format_transcript(opening: str, lines: Sequence[Line]) -> str:
    rows = [f"{RESEARCHER}: {opening}"]
    rows.extend(f"{line.speaker}: {line.text}" for line in lines)
    return "\n".join(rows)


def summarizer_messages(
    system_prompt: str | None, day: int, opening: str, lines: Sequence[Line]
) -> list[dict]:
    template = load_template("summarizer")
    system = system_prompt or template["default_system"]
    user = fill(template["user"], day=str(day), transcript=format_transcript(opening, lines))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def manager_messages(
    agents: Sequence[tuple[str, str]], opening: str, lines: Sequence[Line]
) -> list[dict]:
    """`agents` are (name, role) pairs."""
    template = load_template("manager")
    roster = "\n".join(f"- {name} ({role})" for name, role in agents)
    names = ", ".join(name for name, _ in agents)
    return [
        {"role": "system", "content": fill(template["system"], agents=roster, names=names)},
        {
            "role": "user",
            "content": fill(
                template["user"], transcript=format_transcript(opening, lines), names=names
            ),
        },
    ]


def manager_feedback(answer: str, names: Sequence[str], several: bool) -> str:
    template = load_template("manager")
    key = "feedback_several" if several else "feedback_none"
    return fill(template[key], answer=answer.strip()[:200], names=", ".join(names))
