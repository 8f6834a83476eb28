"""A sweep of a grid experiment: world parameters x models x seeds, expanded into runs (pure).

Each axis left out keeps the experiment's value. Seeds: a `seeds` list is an axis (each seed
places the agents and seeds the sampling, so every radius of one seed starts from the same
cells); without it, `repetitions` runs per cell get seeds `seed`, `seed + 1`, … (none when no
`seed` is given: not reproducible, and said so in the plan).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simulator.domain.experiment import Name
from simulator.domain.grid_experiment import (
    MAX_GRID_AGENTS,
    MAX_GRID_SIDE,
    MAX_GRID_STEPS,
    STAGES,
    GridExperiment,
)
from simulator.domain.ids import content_hash
from simulator.domain.limits import MAX_SEED, MAX_SWEEP_CONVERSATIONS

Radius = Annotated[int, Field(ge=0, le=2 * MAX_GRID_SIDE)]
Agents = Annotated[int, Field(ge=1, le=MAX_GRID_AGENTS)]
Steps = Annotated[int, Field(ge=1, le=MAX_GRID_STEPS)]
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
AXES = ("llm", "agents", "steps", "radius")  # the order of a cell's label


class GridSweepSpec(BaseModel):
    """What to vary in a grid experiment."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["grid"] = "grid"
    name: Name = Field(default="grid sweep", min_length=1, max_length=120)
    llms: list[str] = Field(default_factory=list, max_length=100)
    agents: list[Agents] = Field(default_factory=list, max_length=1000)
    steps: list[Steps] = Field(default_factory=list, max_length=1000)
    radius: list[Radius] = Field(default_factory=list, max_length=1000)
    seeds: list[Seed] = Field(default_factory=list, max_length=10_000)
    repetitions: int = Field(default=1, ge=1, le=10_000)
    seed: Seed | None = None

    @model_validator(mode="after")
    def _consistent(self) -> GridSweepSpec:
        for axis in ("llms", "agents", "steps", "radius", "seeds"):
            values = getattr(self, axis)
            if len(set(values)) != len(values):
                raise ValueError(f"{axis} lists a value twice; list each once")
        if self.seeds and (self.repetitions != 1 or self.seed is not None):
            raise ValueError(
                "seeds lists the seed of every run: leave repetitions and seed out with it "
                "(or drop seeds and give seed and repetitions)"
            )
        size = self.size(1)
        if size > MAX_SWEEP_CONVERSATIONS:
            raise ValueError(
                f"the sweep expands to {size:,} runs, more than {MAX_SWEEP_CONVERSATIONS:,}"
            )
        return self

    def size(self, llms: int) -> int:
        cells = max(len(self.llms), llms) * max(len(self.agents), 1) * max(len(self.steps), 1)
        return cells * max(len(self.radius), 1) * (len(self.seeds) or self.repetitions)

    def run_seeds(self) -> list[int | None]:
        if self.seeds:
            return list(self.seeds)
        if self.seed is None:
            return [None] * self.repetitions
        return [(self.seed + i) % (MAX_SEED + 1) for i in range(self.repetitions)]


@dataclass(frozen=True)
class GridCell:
    llm: str
    agents: int
    steps: int
    radius: int

    def as_dict(self) -> dict:
        return {"llm": self.llm, "agents": self.agents, "steps": self.steps, "radius": self.radius}

    def label(self) -> str:
        return f"radius={self.radius} agents={self.agents} steps={self.steps} llm={self.llm}"


@dataclass(frozen=True)
class PlannedRun:
    cell: GridCell
    cell_key: str
    repetition: int
    seed: int | None
    key: str  # the same owner, experiment version, cell and seed: the same stored run


def cells(spec: GridSweepSpec, experiment: GridExperiment) -> list[GridCell]:
    world = experiment.world
    return [
        GridCell(llm, agents, steps, radius)
        for llm, agents, steps, radius in itertools.product(
            spec.llms or [experiment.llms[0].key],
            spec.agents or [world.agents],
            spec.steps or [world.steps],
            spec.radius or [world.radius],
        )
    ]


def expand(
    spec: GridSweepSpec, experiment: GridExperiment, version: str, owner: str
) -> list[PlannedRun]:
    """Every run, cell by cell; a cell's runs in seed order."""
    planned = []
    for cell in cells(spec, experiment):
        cell_key = content_hash({"v": version, "cell": cell.as_dict()}, 16)
        for repetition, seed in enumerate(spec.run_seeds()):
            identity = {"cell": cell_key, "seed": seed, "rep": repetition, "owner": owner}
            key = "g_" + content_hash(identity, 24)
            planned.append(PlannedRun(cell, cell_key, repetition, seed, key))
    return planned


def calls_per_run(cell: GridCell) -> int:
    return len(STAGES) * cell.agents * cell.steps
