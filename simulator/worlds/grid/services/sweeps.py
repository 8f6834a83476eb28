"""Sweeps of grid experiments (services/sweep_parts.py): cells of world sizes, models and memory
levels x seeds, each run built as `llm-sim run` builds it; services/world_sweeps.py plans and
stores them, and the sweep runner runs them."""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

from simulator.domain.world_sweep import PlannedRun
from simulator.services import world_sweeps
from simulator.services.experiments import ExperimentView
from simulator.services.sweep_parts import RunStored
from simulator.services.sweeps import Plan
from simulator.store.store import Store
from simulator.worlds.grid.domain.experiment import GridExperiment, GridSpec
from simulator.worlds.grid.domain.sweep import GridCell, GridSweepSpec, cell_memory
from simulator.worlds.grid.domain.sweep import expand as expand  # the part's expansion
from simulator.worlds.grid.services import runs as grid_runs

Spec = GridSweepSpec


def build_run(view: ExperimentView, cell: GridCell, seed: int | None) -> GridSpec:
    """The GridSpec of one run, built as `llm-sim run` builds it from the experiment with the
    cell's memory level set over its memory block (so the spec holds the resolved block and
    its notes)."""
    if cell.memory is not None:
        experiment = view.experiment
        assert isinstance(experiment, GridExperiment)
        memory = cell_memory(cell, experiment)
        view = dataclasses.replace(
            view, experiment=experiment.model_copy(update={"memory": memory})
        )
    return grid_runs.build_spec(
        view,
        llm=cell.llm,
        seed=seed,
        world={"agents": cell.agents, "steps": cell.steps, "radius": cell.radius},
    )


def axes(spec: GridSweepSpec) -> list[str]:
    named = (
        ("llm", spec.llms),
        ("agents", spec.agents),
        ("steps", spec.steps),
        ("radius", spec.radius),
        ("memory", spec.memory),
        ("seeds", spec.seeds),
    )
    return world_sweeps.axes(spec, named)


def run_document(
    view: ExperimentView, planned: PlannedRun, user: str, built: dict[str, Any]
) -> dict:
    """A run's fields with the experiment's snapshot as saved; each run's positions come from
    its own seed, so each run is built whole."""
    spec = world_sweeps.cell_run(build_run, view, planned.cell, planned.seed)
    return grid_runs.run_document(view, spec, user)


def plan(store: Store, view: ExperimentView, spec: GridSweepSpec, owner: str) -> Plan:
    """What the sweep will run, without writing anything."""
    return world_sweeps.plan(store, view, spec, owner)


def create(
    store: Store, view: ExperimentView, spec: GridSweepSpec, user: str, prepared: Plan | None = None
) -> tuple[dict, int]:
    """Create the sweep (or find the identical one) and store every run not yet stored."""
    return world_sweeps.create(store, view, spec, user, prepared)


def runner(snapshot: dict) -> RunStored:
    return partial(grid_runs.run, experiment=GridExperiment.from_stored(snapshot))
