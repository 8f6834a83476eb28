"""Sweeps of market experiments (simulator/services/sweep_parts.py): cells of models and
rounds x seeds, planned and stored by services/world_sweeps.py."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from market_world.domain.kind import Spec as RunSpec
from market_world.services import runs as market_runs
from simulator.domain.world_sweep import PlannedRun, SweepSeeds, expand_cells
from simulator.services import world_sweeps
from simulator.services.experiments import ExperimentView
from simulator.services.sweep_parts import RunStored
from simulator.services.sweeps import Plan
from simulator.store.store import Store


class Spec(SweepSeeds):
    """What to vary in a market experiment: its models and its rounds."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["market"] = "market"
    name: str = Field(default="market sweep", min_length=1, max_length=120)
    llms: list[str] = Field(default_factory=list, max_length=100)
    rounds: list[int] = Field(default_factory=list, max_length=100)

    @model_validator(mode="after")
    def _consistent(self) -> Spec:
        self.check_sweep(("llms", "rounds"))
        return self

    def size(self, llms: int) -> int:
        return max(len(self.llms), llms) * max(len(self.rounds), 1) * self.runs_per_cell()


@dataclass(frozen=True)
class Cell:
    llm: str
    rounds: int

    def as_dict(self) -> dict:
        return {"llm": self.llm, "rounds": self.rounds}

    def label(self) -> str:
        return f"llm={self.llm} rounds={self.rounds}"


def expand(spec: Spec, experiment: Any, version: str, owner: str) -> list[PlannedRun]:
    cells = [
        Cell(llm, rounds)
        for llm, rounds in itertools.product(
            spec.llms or [experiment.llms[0].key], spec.rounds or [experiment.market.rounds]
        )
    ]
    return expand_cells(cells, spec.run_seeds(), version, owner, "m_")


def build_run(view: ExperimentView, cell: Cell, seed: int | None) -> RunSpec:
    return market_runs.plan(view, {"rounds": cell.rounds}, llm=cell.llm, seed=seed)


def axes(spec: Spec) -> list[str]:
    return world_sweeps.axes(
        spec, (("llm", spec.llms), ("rounds", spec.rounds), ("seeds", spec.seeds))
    )


def run_document(view: ExperimentView, planned: PlannedRun, user: str, built: dict) -> dict:
    spec = build_run(view, planned.cell, planned.seed)
    return market_runs.run_document(view, spec, user)


def plan(store: Store, view: ExperimentView, spec: Spec, owner: str) -> Plan:
    return world_sweeps.plan(store, view, spec, owner)


def create(
    store: Store, view: ExperimentView, spec: Spec, user: str, prepared: Plan | None = None
) -> tuple[dict, int]:
    return world_sweeps.create(store, view, spec, user, prepared)


def runner(snapshot: dict) -> RunStored:
    return market_runs.run
