"""A sweep of a grid experiment: world parameters x models x memory levels x seeds, expanded
into runs (pure).

Each axis left out keeps the experiment's value. `memory` lists levels of the memory ablation
(`ABLATIONS` in domain/memory/settings.py: full, no_reflection, no_reflection_no_planning,
no_memory, summary); each level
is set over the experiment's own `memory:` block, so `full` keeps its retrieval, threshold and
embedder and turns the stream and its reflection on. A sweep without the axis keeps the cells,
keys and sweep key it had before the axis existed (stored sweeps are found again by key).

Seeds: a `seeds` list is an axis (each seed places the agents and seeds the sampling, so every
radius of one seed starts from the same cells); without it, `repetitions` runs per cell get
seeds `seed`, `seed + 1`, … (none when no `seed` is given: not reproducible, and said so in
the plan).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, model_serializer, model_validator

from simulator.domain.llm_choice import Name
from simulator.domain.world_sweep import PlannedRun, SweepSeeds, expand_cells
from simulator.memory.domain.settings import ABLATIONS, MemoryKind, MemorySettings
from simulator.worlds.grid.domain.experiment import (
    MAX_GRID_AGENTS,
    MAX_GRID_SIDE,
    MAX_GRID_STEPS,
    STAGES,
    GridExperiment,
)
from simulator.worlds.grid.domain.personality import PersonalityProbe
from simulator.worlds.grid.domain.probe import Probe

Radius = Annotated[int, Field(ge=0, le=2 * MAX_GRID_SIDE)]
Agents = Annotated[int, Field(ge=1, le=MAX_GRID_AGENTS)]
Steps = Annotated[int, Field(ge=1, le=MAX_GRID_STEPS)]
AXES = ("llm", "agents", "steps", "radius", "memory")  # the order of a cell's label


def _known_level(name: str) -> str:
    if name not in ABLATIONS:
        raise ValueError(
            f"'{name}' is not a memory level; the levels are {', '.join(ABLATIONS)} "
            "(each sets the experiment's memory block: full = stream with reflection and "
            "planning, no_reflection = stream with planning only, no_reflection_no_planning = "
            "stream alone, no_memory = nothing carried, summary = the rolling self-summary)"
        )
    return name


MemoryLevel = Annotated[str, AfterValidator(_known_level)]


class GridSweepSpec(SweepSeeds):
    """What to vary in a grid experiment."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["grid"] = "grid"
    name: Name = Field(default="grid sweep", min_length=1, max_length=120)
    llms: list[str] = Field(default_factory=list, max_length=100)
    agents: list[Agents] = Field(default_factory=list, max_length=1000)
    steps: list[Steps] = Field(default_factory=list, max_length=1000)
    radius: list[Radius] = Field(default_factory=list, max_length=1000)
    memory: list[MemoryLevel] = Field(default_factory=list, max_length=len(ABLATIONS))

    @model_validator(mode="after")
    def _consistent(self) -> GridSweepSpec:
        self.check_sweep(("llms", "agents", "steps", "radius", "memory"))
        return self

    @model_serializer(mode="wrap")
    def _without_empty_memory(self, handler: Any) -> dict:
        """A sweep without the memory axis dumps as it did before the axis existed: its sweep
        key (world_sweeps.sweep_key hashes the dump) and stored spec stay the same."""
        data = handler(self)
        if not self.memory:
            data.pop("memory", None)
        return data

    def size(self, llms: int) -> int:
        cells = max(len(self.llms), llms) * max(len(self.agents), 1) * max(len(self.steps), 1)
        cells *= max(len(self.radius), 1) * max(len(self.memory), 1)
        return cells * self.runs_per_cell()


@dataclass(frozen=True)
class GridCell:
    llm: str
    agents: int
    steps: int
    radius: int
    memory: str | None = None  # an ABLATIONS level; None: the experiment's own memory block

    def as_dict(self) -> dict:
        cell = {"llm": self.llm, "agents": self.agents, "steps": self.steps, "radius": self.radius}
        if self.memory is not None:  # a cell without the axis keeps the key it always had
            cell["memory"] = self.memory
        return cell

    def label(self) -> str:
        label = f"radius={self.radius} agents={self.agents} steps={self.steps} llm={self.llm}"
        return label if self.memory is None else f"{label} memory={self.memory}"


def cells(spec: GridSweepSpec, experiment: GridExperiment) -> list[GridCell]:
    world = experiment.world
    return [
        GridCell(llm, agents, steps, radius, memory)
        for llm, agents, steps, radius, memory in itertools.product(
            spec.llms or [experiment.llms[0].key],
            spec.agents or [world.agents],
            spec.steps or [world.steps],
            spec.radius or [world.radius],
            spec.memory or [None],
        )
    ]


def cell_memory(cell: GridCell, experiment: GridExperiment) -> MemorySettings:
    """The memory block a cell's runs start from, before `resolved()` fills its defaults: the
    experiment's own, with the cell's level set over it."""
    if cell.memory is None:
        return experiment.memory
    data = {**experiment.memory.model_dump(), **ABLATIONS[cell.memory]}
    return MemorySettings.model_validate(data)


def expand(
    spec: GridSweepSpec, experiment: GridExperiment, version: str, owner: str
) -> list[PlannedRun]:
    """Every run, cell by cell; a cell's runs in seed order."""
    return expand_cells(cells(spec, experiment), spec.run_seeds(), version, owner, "g_")


def calls_per_run(
    cell: GridCell,
    memory: MemoryKind,
    probe: Probe | None = None,
    personality: PersonalityProbe | None = None,
) -> int:
    """LLM calls of one run: message, memory and move per agent per step with the summary
    memory; message and move with a stream or none; the probe's interviews after the last
    step; the personality test's items. A stream's own calls (ratings, reflections) depend
    on the replies, so a stream run makes at least this many."""
    stages = len(STAGES) if memory == "summary" else len(STAGES) - 1
    tests = personality.calls(cell.agents) if personality else 0
    return stages * cell.agents * cell.steps + (probe.calls(cell.agents) if probe else 0) + tests
