"""What an opinion network run tells the outside world (engine/events.py), beside every run's
events."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.engine.events import Event


@dataclass(frozen=True)
class NetworkPlanned(Event):
    names: list[str]
    rounds: int  # rounds after round 0
    stored: int  # rounds already stored, round 0 included (a resumed run starts after them)


@dataclass(frozen=True)
class NetworkRoundStored(Event):
    round: int
    rows: list[dict]  # one per agent, as stored in network_rounds
