"""Forks (pure): where a run is branched, what replaces the message there (a chat's), and which
seed each repetition of a fork runs with.

A fork is a new conversation that shares its parent's messages before the fork point (read
from the parent, never copied) and continues from there under changed settings. The fork point
names the first message the fork does not share: `DAY:INDEX`, the message's day and its place
in the day counted from 0, as `conversation show` prints it (`[1:3]`). A fork at 1:3 shares
messages 1:0, 1:1 and 1:2; with an edit, the researcher's text stands at 1:3 in place of the
parent's, spoken by the same agent.

A grid run or a network run is branched at a step or a round (`StepPoint`): `--at N` names the
first one the fork does not share, so a grid fork at step 2 shares the parent's step-1 rows and
stores its own from step 2 on; a network fork at round 1 shares round 0 (the agents table's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from simulator.domain.limits import MAX_EDIT_CHARS
from simulator.errors import UserError

EDIT_PURPOSE = "researcher_edit"  # the ledger row of an edited message: no model was called
MAX_FORK_DEPTH = 100  # forks of forks: a longer chain is a loop in a damaged store
_POINT = re.compile(r"^\s*(\d+)\s*:\s*(\d+)\s*$")


@dataclass(frozen=True, order=True)
class ForkPoint:
    """The first message a fork does not share with its parent."""

    day: int
    index: int

    @classmethod
    def parse(cls, text: str, field: str = "--at") -> ForkPoint:
        found = _POINT.match(text or "")
        if not found or int(found.group(1)) < 1:
            raise UserError(
                f"{text!r} is not a message's place",
                field=field,
                fix="write DAY:INDEX as `conversation show` prints it, e.g. 1:3 for day 1's "
                "fourth message (days count from 1, messages within a day from 0)",
            )
        return cls(int(found.group(1)), int(found.group(2)))

    @classmethod
    def of(cls, stored: dict) -> ForkPoint:
        return cls(int(stored["day"]), int(stored["index"]))

    def as_dict(self) -> dict:
        return {"day": self.day, "index": self.index}

    def __str__(self) -> str:
        return f"{self.day}:{self.index}"

    def holds(self, day: int, index: int) -> bool:
        """Whether the message at (day, index) comes before this point (is shared)."""
        return (day, index) < (self.day, self.index)


_STEP = re.compile(r"^\s*(?:([a-z]+)\s*[: ]\s*)?(\d+)\s*$", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class StepPoint:
    """The first step (grid) or round (network) a world's fork does not share."""

    unit: str  # the world's ROW_UNIT: "step" (a grid's), "round" (a network's)
    n: int

    @classmethod
    def parse(cls, text: str, unit: str, field: str = "--at") -> StepPoint:
        """`N`, or `step:N` / `round:N` (the unit must be the run's own)."""
        found = _STEP.match(text or "")
        if found is None or (found.group(1) or unit).lower() != unit:
            world, others = _worlds(unit)
            raise UserError(
                f"{text!r} is not a {unit}",
                field=field,
                fix=f"a {world} run forks at a {unit}: write --at N (or {unit}:N) for "
                f"the first {unit} the fork does not share (not DAY:INDEX, a chat's place, "
                f"nor {' nor '.join(f'{u}:N' for u in others)})",
            )
        return cls(unit, int(found.group(2)))

    @classmethod
    def of(cls, stored: dict) -> StepPoint:
        [(unit, n)] = stored.items()  # {"step": 2}: as_dict's
        return cls(unit, int(n))

    def as_dict(self) -> dict:
        return {self.unit: self.n}

    def __str__(self) -> str:
        return f"{self.unit} {self.n}"

    def holds(self, n: int) -> bool:
        """Whether step (round) n comes before this point (is shared)."""
        return n < self.n


def _worlds(unit: str) -> tuple[str, list[str]]:
    """The world whose runs count `unit`, and the units the other worlds' forks take."""
    from simulator.domain.world import domain_of
    from simulator.worlds import names

    units = {kind: domain_of(kind).ROW_UNIT for kind in names()}
    world = next((kind for kind, u in units.items() if u == unit), unit)
    return world, [u for u in units.values() if u is not None and u != unit]


def point_of(stored: dict) -> ForkPoint | StepPoint:
    """A stored `fork_at`: a chat's {day, index}, a grid's {step} or a network's {round}."""
    return ForkPoint.of(stored) if "day" in stored else StepPoint.of(stored)


def point_text(stored: dict | None) -> str:
    """A stored `fork_at` as people read it: "1:3", "step 2", "round 1" ("?" when missing)."""
    return str(point_of(stored)) if stored else "?"


@dataclass(frozen=True)
class ForkEdit:
    """The researcher's text in place of the parent's message at the fork point."""

    day: int
    index: int
    speaker: str
    role: str
    text: str
    original_text: str

    @classmethod
    def from_stored(cls, stored: dict | None) -> ForkEdit | None:
        return None if not stored else cls(**stored)

    def as_dict(self) -> dict:
        return {
            "day": self.day,
            "index": self.index,
            "speaker": self.speaker,
            "role": self.role,
            "text": self.text,
            "original_text": self.original_text,
        }

    def message(self, seq: int) -> dict:
        """The fork's own message at the fork point: the agent's, marked as the researcher's."""
        return {
            "day": self.day,
            "index": self.index,
            "seq": seq,
            "speaker": self.speaker,
            "role": self.role,
            "text": self.text,
            "raw_text": self.text,
            "trimmed": False,
            "cut_at": None,
            "cut_label": None,
            "empty": False,
            "speaker_fallback": False,
            "speaker_notes": [],
            "model": None,
            "llm_label": None,
            "latency_s": 0.0,
            "tokens_in": None,
            "tokens_out": None,
            "edited": True,
            "original_text": self.original_text,
        }

    def ledger_row(self, conversation_id: str, created_at: object) -> dict:
        """The ledger's row for the edit: a finished "call" that no model answered."""
        return {
            "conversation_id": conversation_id,
            "purpose": EDIT_PURPOSE,
            "day": self.day,
            "index": self.index,
            "agent": self.speaker,
            "model": None,
            "llm_label": None,
            "base_url": None,
            "params": {},
            "prompt_hash": None,
            "attempt": 1,
            "state": "done",
            "response": self.text,
            "edited_from": self.original_text,
            "error": None,
            "error_kind": None,
            "created_at": created_at,
        }


def repetition_seeds(base: int | None, repetitions: int) -> list[int | None]:
    """One seed per repetition: the base, then base + 1, ... (None: no seed for any)."""
    if base is None:
        return [None] * repetitions
    return [(base + r) % 2**32 for r in range(repetitions)]


def say_seeds(
    given: int | None, base: int | None, repetitions: int, notes: list[str], defaults: list[str]
) -> None:
    """Say which seeds the repetitions run with: the given one (`--seed`) or the parent's
    (`base`), +1 per repetition."""
    if given is None and base is not None:
        defaults.append(f"seed: {base} (not given; the parent's), then +1 per repetition")
    elif base is None:
        defaults.append("seed: none (the parent had none; continuations are not reproducible)")
    elif repetitions > 1:
        notes.append(f"seeds {base} to {base + repetitions - 1}, one per repetition")


def parse_edit(text: str | None) -> str | None:
    """The edit's text, stripped; an empty edit is refused (a fork without --edit regenerates
    the message instead)."""
    if text is None:
        return None
    if not text.strip():
        raise UserError(
            "the edited message is empty",
            field="--edit",
            fix="give the text the agent says at the fork point, or leave --edit out to let "
            "the model speak there again",
        )
    text = text.strip()
    if len(text) > MAX_EDIT_CHARS:
        raise UserError(
            f"the edited message is {len(text):,} characters long, more than the "
            f"{MAX_EDIT_CHARS:,} an edit may hold",
            field="--edit",
            fix=f"shorten it to at most {MAX_EDIT_CHARS:,} characters (a message is a few "
            "sentences; a model's reply is capped by max_tokens)",
        )
    return text
