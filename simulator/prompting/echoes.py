"""Prompt echoes and invented day headers: what small models write that nobody said.

Small models (the bundled SmolLM2-135M among them) recite their instructions ("You are
Prisoner_1.", a line of their system prompt) and continue the transcript's layout past their own
turn, inventing "Day 2 summary:" or "Day 4:" sections. Neither is the agent speaking. With the
`speakers_echoes` cleaning these are taken out of the clean text (the raw reply is kept beside
it): an echo sentence is removed wherever it stands; a header at the start loses its label, and
at any later line the reply is cut there, as a reply is cut where it starts speaking for someone
else (prompting/bleed.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# "Day 4:", "**Day 2 summary:**", "## Day 3", "Summary of day 1:", "[Day 2]"; a header is a
# label that ends in a colon or ends its line, never "Day 2 was hard."
_HEADER = re.compile(
    r"^[ \t]*(?:#+[ \t]*)?[*_\[(]*[ \t]*"
    r"(?:(?:summary|recap)[ \t]+(?:of|for)[ \t]+day[ \t]*\d+"
    r"|day[ \t]*\d+(?:[ \t]+(?:summary|recap|notes|log|report))?)"
    r"[ \t]*[*_\])]*[ \t]*(?::[*_]*[ \t]*|$)",
    re.IGNORECASE | re.MULTILINE,
)
_MIN_ECHO_CHARS = 30  # a shorter line of the system prompt may be said in character


@dataclass(frozen=True)
class EchoCleaned:
    text: str
    changed: bool
    echoes: int  # sentences removed as echoes of the instructions
    cut_at_header: bool  # the reply was cut where it started an invented section


def _identity_echo(names: Iterable[str], roles: Iterable[str]) -> re.Pattern[str]:
    """'You are Prisoner_1.' or 'Your name is Guard_2.' as a sentence of its own: the name line
    of the instructions. 'You are the prisoner here, so listen.' is speech and stays."""
    labels = sorted({re.escape(x) for x in [*names, *roles] if x}, key=len, reverse=True)
    who = "(?:" + "|".join(label.replace(r"\ ", "[ _]") for label in labels) + r")(?:[ _]?\d+)?"
    return re.compile(
        r"(?:you are|your name is)[ \t]+" + who + r"\b[ \t]*(?:[.!?]+|(?=\n)|$)",
        re.IGNORECASE,
    )


def _sentences(system_prompt: str) -> set[str]:
    """The system prompt's lines and sentences, folded for comparison."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", system_prompt)
    return {_fold(p) for p in parts if len(_fold(p)) >= _MIN_ECHO_CHARS}


def _fold(text: str) -> str:
    return " ".join(text.lower().strip(" \t*#_").split())


def clean_echoes(
    text: str, names: Iterable[str], roles: Iterable[str], system_prompt: str
) -> EchoCleaned:
    """Remove echoes of the agent's instructions, then drop or cut at invented day headers.

    `names` are every agent's names, `roles` the experiment's roles (an agent echoing
    "You are Prisoner_2." is reciting, whoever it names)."""
    original = text
    identity = _identity_echo(names, roles)
    text, echoes = identity.subn("", text)
    recited = _sentences(system_prompt)
    kept_lines = []
    for line in text.split("\n"):
        pieces = re.split(r"(?<=[.!?])[ \t]+", line)
        kept = [p for p in pieces if _fold(p) not in recited]
        echoes += len(pieces) - len(kept)
        kept_lines.append(" ".join(kept))
    text = "\n".join(kept_lines).strip()
    cut = False
    first = _HEADER.match(text)
    if first:  # a label opening the reply: the words after it are the turn
        text = text[first.end() :].lstrip()
    later = _HEADER.search(text)
    if later:
        text, cut = text[: later.start()].rstrip(), True
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return EchoCleaned(text, text != original.strip(), echoes, cut)
