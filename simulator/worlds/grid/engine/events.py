"""What a 2D community run tells the outside world (engine/events.py), beside every run's events."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.engine.events import Event


@dataclass(frozen=True)
class GridPlanned(Event):
    names: list[str]
    world: dict  # GridWorld as a dict: width, height, torus, agents, steps, radius
    step: int  # steps already stored (a resumed run starts after them)
    positions: list[tuple[int, int]]


@dataclass(frozen=True)
class GridStepStarted(Event):
    step: int


@dataclass(frozen=True)
class GridStepStored(Event):
    step: int
    rows: list[dict]  # one per agent, as stored in grid_steps
