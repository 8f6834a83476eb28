"""What the engine tells the outside world. The CLI renders these; the core never prints.

Every event is an `Event` about one run (`conversation_id`); a world's own events live in its
folder (`simulator/worlds/<kind>/engine/events.py`) and subclass it, so a new world adds its
events without touching this module."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    """Something that happened to one run."""

    conversation_id: str


@dataclass(frozen=True)
class DaysPlanned(Event):
    split: list[int]
    agents: list[tuple[str, str, str]]  # (name, role, model or "model as label")


@dataclass(frozen=True)
class DayStarted(Event):
    day: int
    opening: str


@dataclass(frozen=True)
class TurnStarted(Event):
    day: int
    index: int
    speaker: str


@dataclass(frozen=True)
class MessageStored(Event):
    day: int
    index: int
    speaker: str
    role: str
    text: str
    trimmed: bool
    empty: bool
    fallback: bool
    tokens_out: int | None


@dataclass(frozen=True)
class DaySummarised(Event):
    day: int
    summary: str


@dataclass(frozen=True)
class ConversationFinished(Event):
    status: str
    error: str | None
    counters: dict
