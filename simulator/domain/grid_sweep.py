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

from pydantic import ConfigDict, Field, model_validator

from simulator.domain.experiment import Name
from simulator.domain.grid_experiment import (
    MAX_GRID_AGENTS,
    MAX_GRID_SIDE,
    MAX_GRID_STEPS,
    STAGES,
    GridExperiment,
)
from simulator.domain.limits import MAX_SWEEP_CONVERSATIONS
from simulator.domain.world_sweep import PlannedRun, SweepSeeds, expand_cells

Radius = Annotated[int, Field(ge=0, le=2 * MAX_GRID_SIDE)]
Agents = Annotated[int, Field(ge=1, le=MAX_GRID_AGENTS)]
Steps = Annotated[int, Field(ge=1, le=MAX_GRID_STEPS)]
AXES = ("llm", "agents", "steps", "radius")  # the order of a cell's label


class GridSweepSpec(SweepSeeds):
    """What to vary in a grid experiment."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["grid"] = "grid"
    name: Name = Field(default="grid sweep", min_length=1, max_length=120)
    llms: list[str] = Field(default_factory=list, max_length=100)
    agents: list[Agents] = Field(default_factory=list, max_length=1000)
    steps: list[Steps] = Field(default_factory=list, max_length=1000)
    radius: list[Radius] = Field(default_factory=list, max_length=1000)

    @model_validator(mode="after")
    def _consistent(self) -> GridSweepSpec:
        for axis in ("llms", "agents", "steps", "radius"):
            values = getattr(self, axis)
            if len(set(values)) != len(values):
                raise ValueError(f"{axis} lists a value twice; list each once")
        self.check_seeds()
        size = self.size(1)
        if size > MAX_SWEEP_CONVERSATIONS:
            raise ValueError(
                f"the sweep expands to {size:,} runs, more than {MAX_SWEEP_CONVERSATIONS:,}"
            )
        return self

    def size(self, llms: int) -> int:
        cells = max(len(self.llms), llms) * max(len(self.agents), 1) * max(len(self.steps), 1)
        return cells * max(len(self.radius), 1) * self.runs_per_cell()


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
    return expand_cells(cells(spec, experiment), spec.run_seeds(), version, owner, "g_")


def calls_per_run(cell: GridCell) -> int:
    return len(STAGES) * cell.agents * cell.steps
