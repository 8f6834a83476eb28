"""Role-bleed trimming: models often keep writing the other side of the conversation.

Strip the speaker's own name or role tag at the start; cut where the reply starts speaking for
another agent or role (`Prisoner:`, `Guard_2:`, `**Guard:**`, `[Prisoner]`, case-insensitive).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Trimmed:
    text: str
    trimmed: bool  # something was removed (own tag or someone else's lines)
    cut_at: int | None = None  # character index in the raw reply where it was cut, if it was
    cut_label: str | None = None  # the speaker tag found there (`Prisoner`, `Guard_2`)


def _tag_pattern(labels: Iterable[str]) -> str:
    alternatives = sorted({re.escape(label) for label in labels if label}, key=len, reverse=True)
    names = "|".join(alt.replace(r"\ ", r"[ _]") for alt in alternatives)
    # **Name:**, **Name**:, [Name], (Name):, Name:, Name -, with an optional agent number
    return (
        r"(?:\*\*|__)?[\[(]?\s*(?P<label>(?:" + names + r")(?:[ _]?\d+)?)\s*[\])]?"
        r"(?:\*\*|__)?\s*(?::|\]|-(?=\s))(?:\*\*|__)?"
    )


def trim_reply(
    text: str, speaker: str, role: str, others: Iterable[str], other_roles: Iterable[str]
) -> Trimmed:
    """Clean one reply. `others` are the other agents' names, `other_roles` the roles' names."""
    original = text
    own = re.compile(r"^\s*" + _tag_pattern([speaker, role]) + r"\s*", re.IGNORECASE)
    own_match = own.match(text)
    offset = own_match.end() if own_match else 0  # raw index of text[0] after the own tag
    text = text[offset:]
    foreign_labels = [*others, *other_roles, "researcher", "summarizer", "manager"]
    foreign = re.compile(
        r"(?:^|(?<=\n)|(?<=[.!?…]\s)|(?<=[.!?…]\"\s))\s*" + _tag_pattern(foreign_labels),
        re.IGNORECASE,
    )
    cut_at: int | None = None
    cut_label: str | None = None
    match = foreign.search(text)
    if match:
        cut_at, cut_label = offset + match.start(), match.group("label")
        text = text[: match.start()]
    # a later line in which the speaker starts again as themselves is dropped too
    again = re.compile(r"\n\s*" + _tag_pattern([speaker]), re.IGNORECASE)
    match = again.search(text)
    if match:
        cut_at, cut_label = offset + match.start(), match.group("label")
        text = text[: match.start()]
    text = text.strip()
    return Trimmed(text, trimmed=text != original.strip(), cut_at=cut_at, cut_label=cut_label)
