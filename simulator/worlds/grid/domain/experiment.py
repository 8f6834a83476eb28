"""A grid experiment (`kind: grid`) and one run's fixed choices (`GridSpec`). Pure data.

The paper's defaults (shared/specs/takata-grid.md) are the field defaults; the shipped file
prompts/experiments/takata_grid.yaml spells them out. Prompt templates use `{field}` names,
checked here so a typo is refused when the experiment is saved, not in step 40 of a run.
"""

from __future__ import annotations

import string
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from simulator.domain.limits import MAX_SEED
from simulator.domain.llm_choice import LLMChoice, WorldExperiment
from simulator.memory.domain.settings import MemorySettings
from simulator.worlds.grid.domain.measures import GridMeasures
from simulator.worlds.grid.domain.personality import PersonalityProbe
from simulator.worlds.grid.domain.probe import Probe
from simulator.worlds.grid.domain.rules import (
    INITIAL_MEMORY,
    Position,
    agent_names,
    initial_positions,
)

GRID_KIND = "grid"
TEMPLATE_FIELDS = (
    "name",
    "x",
    "y",
    "width",
    "height",
    "agents",
    "radius",
    "memory",
    "messages",
    "identity",  # the agent's persona (`personas`); empty without one
    "plan",  # the memory stream's plan for the step's hour (memory.planning); else empty
    "action",  # the plan's 5-15-minute actions the step overlaps (memory.plan_levels 3)
)
# what a stored grid experiment keeps under `spec`
GRID_FIELDS = (
    "llms",
    "world",
    "prompts",
    "memory",
    "personas",
    "probe",
    "measures",
    "personality",
)
STAGES = ("message", "memory", "move")  # the three calls of every agent in every step
MAX_GRID_SIDE = 1000
MAX_GRID_AGENTS = 1000
MAX_GRID_STEPS = 10_000


class GridPrompts(BaseModel):
    """The three templates every agent is prompted with, each sent alone (no chat history)."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, max_length=20_000)
    memory: str = Field(min_length=1, max_length=20_000)
    move: str = Field(min_length=1, max_length=20_000)

    @model_validator(mode="after")
    def _known_fields(self) -> GridPrompts:
        for stage in STAGES:
            check_template(getattr(self, stage), f"prompts.{stage}")
        return self


def check_template(text: str, where: str) -> None:
    """Only the documented `{fields}`; a literal brace is written `{{` or `}}`."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc} (write a literal brace as {{{{ or }}}})") from None
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in TEMPLATE_FIELDS or spec or conversion:
            raise ValueError(
                f"{where}: unknown field {{{field}}}; the fields are "
                + " ".join(f"{{{name}}}" for name in TEMPLATE_FIELDS)
            )


class Persona(BaseModel):
    """Who one agent is (`{identity}` in its prompts) and what it remembers at the start: its
    seed memories (the stream's first records, each rated; the summary memory's first text)."""

    model_config = ConfigDict(extra="forbid")

    identity: str = Field(default="", max_length=5000)
    memories: list[str] = Field(default_factory=list, max_length=100)

    @field_validator("memories")
    @classmethod
    def _texts(cls, value: list[str]) -> list[str]:
        for i, text in enumerate(value):
            if not text.strip() or len(text) > 2000:
                raise ValueError(f"memories[{i}] must hold 1 to 2,000 characters")
        return [text.strip() for text in value]


class GridWorld(BaseModel):
    """The world's parameters: what a sweep may vary and a run fixes."""

    model_config = ConfigDict(extra="forbid")

    width: int = Field(default=50, ge=1, le=MAX_GRID_SIDE)
    height: int = Field(default=50, ge=1, le=MAX_GRID_SIDE)
    torus: bool = True
    agents: int = Field(default=10, ge=1, le=MAX_GRID_AGENTS)
    steps: int = Field(default=100, ge=1, le=MAX_GRID_STEPS)
    radius: int = Field(default=5, ge=0, le=2 * MAX_GRID_SIDE)
    # None: random cells drawn from the run's seed; else one [x, y] per agent
    positions: list[tuple[int, int]] | None = None
    initial_memory: str = Field(default=INITIAL_MEMORY, max_length=20_000)

    @model_validator(mode="after")
    def _positions_fit(self) -> GridWorld:
        if self.positions is None:
            return self
        if len(self.positions) != self.agents:
            raise ValueError(
                f"positions lists {len(self.positions)} cells for {self.agents} agents; give "
                "one [x, y] per agent, or leave positions out for random cells"
            )
        for i, (x, y) in enumerate(self.positions):
            if not (0 <= x < self.width and 0 <= y < self.height):
                raise ValueError(
                    f"positions[{i}] = [{x}, {y}] is off the {self.width} x {self.height} field "
                    f"(x from 0 to {self.width - 1}, y from 0 to {self.height - 1})"
                )
        return self

    def starting_positions(self, seed: int | None) -> list[Position]:
        if self.positions is not None:
            return [(int(x), int(y)) for x, y in self.positions]
        return initial_positions(self.agents, self.width, self.height, seed)


class GridExperiment(WorldExperiment):
    """Agents with no persona on a 2D field, talking to neighbours (Takata et al. 2024)."""

    kind: Literal["grid"] = GRID_KIND
    world: GridWorld = Field(default_factory=GridWorld)
    prompts: GridPrompts
    # summary: the rolling self-summary (the `memory` stage); stream: a memory stream
    # (retrieved into {memory}, no memory stage); none: {memory} is always empty
    memory: MemorySettings = Field(default_factory=MemorySettings)
    # one per agent, in agent order (agent0 first); None: agents with no persona (the paper's)
    personas: list[Persona] | None = None
    # interviews after the last step and a gathering's attendance (domain/probe.py)
    probe: Probe | None = None
    # the analysis' settings (domain/grid_measures.py); None: the defaults
    measures: GridMeasures | None = None
    # an A/B personality test at the first and last step (domain/personality.py)
    personality: PersonalityProbe | None = None

    @model_validator(mode="after")
    def _consistent(self) -> GridExperiment:
        if self.personas is not None and len(self.personas) != self.world.agents:
            raise ValueError(
                f"personas lists {len(self.personas)} agents and world.agents is "
                f"{self.world.agents}; give one persona per agent, or leave personas out"
            )
        place = self.probe.attendance.place if self.probe and self.probe.attendance else None
        if place is not None and not (
            0 <= place[0] < self.world.width and 0 <= place[1] < self.world.height
        ):
            raise ValueError(
                f"probe.attendance.place [{place[0]}, {place[1]}] is off the "
                f"{self.world.width} x {self.world.height} field"
            )
        return self


class GridSpec(BaseModel):
    """One grid run with every choice fixed; stored whole on its run document."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["grid"] = GRID_KIND
    world: GridWorld
    start: list[tuple[int, int]]  # the cells the agents start on (drawn or given)
    llm: LLMChoice
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    defaults_applied: list[str] = Field(default_factory=list)
    memory: MemorySettings = Field(default_factory=MemorySettings)  # resolved: no value unset
    personas: list[Persona] | None = None
    probe: Probe | None = None
    # what the run is measured with, stored resolved on new runs; None (runs stored before
    # it existed): the defaults. Left out of the dump when None.
    measures: GridMeasures | None = None
    personality: PersonalityProbe | None = None  # left out of the dump when None

    @model_serializer(mode="wrap")
    def _without_unset_measures(self, handler: Any) -> dict:
        data = handler(self)
        if self.measures is None:
            data.pop("measures", None)
        if self.personality is None:
            data.pop("personality", None)
        return data

    def persona(self, agent: int) -> Persona:
        return self.personas[agent] if self.personas else Persona()

    @field_validator("start")
    @classmethod
    def _some(cls, value: list[tuple[int, int]]) -> list[tuple[int, int]]:
        if not value:
            raise ValueError("a grid run needs at least one agent")
        return value

    @model_validator(mode="after")
    def _one_cell_per_agent(self) -> GridSpec:
        if len(self.start) != self.world.agents:
            raise ValueError(f"start lists {len(self.start)} cells for {self.world.agents} agents")
        return self

    @property
    def names(self) -> list[str]:
        return agent_names(self.world.agents)

    @property
    def calls(self) -> int:
        """LLM calls of the whole run: three per agent per step with the summary memory, two
        (message, move) otherwise; a memory stream adds its own (ratings, reflections)."""
        stages = len(STAGES) if self.memory.kind == "summary" else len(STAGES) - 1
        interviews = self.probe.calls(self.world.agents) if self.probe else 0
        tests = self.personality.calls(self.world.agents) if self.personality else 0
        return stages * self.world.agents * self.world.steps + interviews + tests


def is_grid(data: dict | None) -> bool:
    """Whether a stored experiment, spec or run document is a grid one."""
    return bool(data) and data.get("kind") == GRID_KIND
