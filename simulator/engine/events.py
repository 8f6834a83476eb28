"""What the engine tells the outside world. The CLI renders these; the core never prints."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DaysPlanned:
    conversation_id: str
    split: list[int]
    agents: list[tuple[str, str, str]]  # (name, role, model or "model as label")


@dataclass(frozen=True)
class DayStarted:
    conversation_id: str
    day: int
    opening: str


@dataclass(frozen=True)
class TurnStarted:
    conversation_id: str
    day: int
    index: int
    speaker: str


@dataclass(frozen=True)
class MessageStored:
    conversation_id: str
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
class DaySummarised:
    conversation_id: str
    day: int
    summary: str


@dataclass(frozen=True)
class ConversationFinished:
    conversation_id: str
    status: str
    error: str | None
    counters: dict


@dataclass(frozen=True)
class GridPlanned:
    conversation_id: str
    names: list[str]
    world: dict  # GridWorld as a dict: width, height, torus, agents, steps, radius
    step: int  # steps already stored (a resumed run starts after them)
    positions: list[tuple[int, int]]


@dataclass(frozen=True)
class GridStepStarted:
    conversation_id: str
    step: int


@dataclass(frozen=True)
class GridStepStored:
    conversation_id: str
    step: int
    rows: list[dict]  # one per agent, as stored in grid_steps


@dataclass(frozen=True)
class NetworkPlanned:
    conversation_id: str
    names: list[str]
    rounds: int  # rounds after round 0
    stored: int  # rounds already stored, round 0 included (a resumed run starts after them)


@dataclass(frozen=True)
class NetworkRoundStored:
    conversation_id: str
    round: int
    rows: list[dict]  # one per agent, as stored in network_rounds


Event = (
    DaysPlanned
    | DayStarted
    | TurnStarted
    | MessageStored
    | DaySummarised
    | ConversationFinished
    | GridPlanned
    | GridStepStarted
    | GridStepStored
    | NetworkPlanned
    | NetworkRoundStored
)
