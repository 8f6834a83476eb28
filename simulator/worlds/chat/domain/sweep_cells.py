"""A sweep's cells and planned conversations, and the keys that name them.

A conversation's key covers everything that decides what it is (`conversation_key`); a sweep's
expansion makes one per repetition of each cell, a million for the largest sweep, so the keys
of a cell are made from its canonical text built once (`CellKeys`).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simulator.domain.ids import canonical_json, content_hash

if TYPE_CHECKING:
    from simulator.worlds.chat.domain.sweep import SweepSpec

# The chat switches' defaults: a sweep at them stores, keys and dumps as before they existed.
SWITCH_DEFAULTS = {"reply_cleaning": "speakers", "speaker_format": "prefix"}


@dataclass(frozen=True)
class Cell:
    """One combination of factors; a sweep runs `repetitions` conversations per cell."""

    role_llms: dict[str, str]
    manager_llm: str | None
    summarizer_llm: str | None
    days: int
    agents: dict[str, int]
    speaker_method: str
    variant: dict[str, str]
    # True when the sweep named no manager for an `auto` cell and the first role's model was
    # used; recorded and printed, not part of the cell's identity (the model itself is).
    manager_defaulted: bool = False

    def as_dict(self) -> dict:
        return {
            "role_llms": self.role_llms,
            "manager_llm": self.manager_llm,
            "summarizer_llm": self.summarizer_llm,
            "days": self.days,
            "agents": self.agents,
            "speaker_method": self.speaker_method,
            "variant": self.variant,
        }

    def label(self) -> str:
        agents = "v".join(str(n) for n in self.agents.values())
        models = "/".join(dict.fromkeys(self.role_llms.values()))
        titles = [k.split("/")[-1] for k in self.variant]
        # the section's title alone, or Role/Title where two varied sections share a title
        variant = ",".join(
            f"{k if titles.count(title) > 1 else title}={v}"
            for (k, v), title in zip(self.variant.items(), titles, strict=True)
        )
        return f"{models} {agents} d{self.days} {self.speaker_method}" + (
            f" [{variant}]" if variant else ""
        )


@dataclass(frozen=True, slots=True)  # a sweep of 1,000,000 holds one per conversation
class PlannedConversation:
    key: str
    cell: Cell
    cell_key: str
    repetition: int
    seed: int | None


def conversation_key(
    experiment_version: str,
    cell: Cell,
    repetition: int,
    *,
    total_messages: int,
    seed: int | None,
    owner: str | None,
    message_counting: str = "agent_turns",
    allow_repeat_speaker: bool = False,
    switches: dict[str, str] | None = None,
    text: bool = False,
) -> str:
    """Deterministic, and covering everything that decides what a conversation is.

    A conversation's spec is built from exactly these: the experiment version (which fixes its
    texts and every listed LLM's parameters), the cell, the message total and its counting, and
    the seed. The owner is part of it too, so one researcher's sweep never adopts another's
    conversations. Two sweeps share a conversation only when it would run identically. The
    counting enters only when it is not the default, so keys made before it existed still hold.
    """
    data = {
        "v": experiment_version,
        "cell": cell.as_dict(),
        "r": repetition,
        "total_messages": total_messages,
        "seed": seed,
        "owner": owner,
    }
    if message_counting != "agent_turns":
        data["message_counting"] = message_counting
    if allow_repeat_speaker:
        data["allow_repeat_speaker"] = True
    for name, value in (switches or {}).items():  # the chat switches, when not the defaults
        if value != SWITCH_DEFAULTS[name]:
            data[name] = value
    return canonical_json(data) if text else "k_" + content_hash(data, 24)


_REPETITION, _SEED = "\x00repetition\x00", "\x00seed\x00"  # no JSON text holds them


def repetition_seed(sweep_seed: int, cell_key: str, repetition: int) -> int:
    """A repetition's seed: content_hash([sweep_seed, cell_key, repetition], 8) as a number
    (its canonical JSON written directly: a million per sweep)."""
    return int(_hash(f'[{sweep_seed},"{cell_key}",{repetition}]', 8), 16)


def _hash(text: str, length: int) -> str:
    """content_hash of data whose canonical JSON is `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


class CellKeys:
    """conversation_key for every repetition of one cell: the canonical JSON is made once with
    placeholders for the repetition and the seed, then filled in (same text, same key)."""

    def __init__(self, version: str, cell: Cell, spec: SweepSpec, owner: str | None) -> None:
        self._make = functools.partial(
            conversation_key,
            version,
            cell,
            total_messages=spec.total_messages,
            owner=owner,
            message_counting=spec.message_counting,
            allow_repeat_speaker=spec.allow_repeat_speaker,
            switches=spec.switches,
        )
        self._parts: list[str] | None = self._split(self._make(_REPETITION, seed=_SEED, text=True))
        # the text before the repetition is the same for every key of the cell (most of it):
        # hashed once, and each key goes on from a copy of that state
        self._before = None if self._parts is None else hashlib.sha256(self._parts[0].encode())

    @staticmethod
    def _split(text: str) -> list[str] | None:
        r, s = canonical_json(_REPETITION), canonical_json(_SEED)
        if text.count(r) != 1 or text.count(s) != 1 or text.index(r) > text.index(s):
            return None  # a placeholder's text occurs elsewhere: hash each key in full
        before, rest = text.split(r)
        middle, after = rest.split(s)
        return [before, middle, after]

    def key(self, repetition: int, seed: int | None) -> str:
        if self._parts is None or self._before is None:
            return self._make(repetition, seed=seed)
        _, middle, after = self._parts
        seed_text = "null" if seed is None else str(seed)
        digest = self._before.copy()
        digest.update(f"{repetition}{middle}{seed_text}{after}".encode())
        return "k_" + digest.hexdigest()[:24]
