"""Sweeps of grid experiments: plan and create (idempotent; services/world_sweeps.py stores
them), then the shared runner runs them."""

from __future__ import annotations

import dataclasses

from pydantic import ValidationError

from simulator.domain.yaml_io import validation_to_user_error
from simulator.errors import UserError
from simulator.memory.domain.settings import MemoryKind
from simulator.services import world_sweeps
from simulator.services.experiments import ExperimentView
from simulator.services.sweeps import Plan
from simulator.store.store import Store
from simulator.worlds.grid.domain.experiment import GridExperiment, GridSpec
from simulator.worlds.grid.domain.sweep import (
    GridCell,
    GridSweepSpec,
    calls_per_run,
    cell_memory,
    cells,
    expand,
)
from simulator.worlds.grid.services import runs as grid_runs


def validate_spec(data: dict, source: str | None = None) -> GridSweepSpec:
    try:
        return GridSweepSpec.model_validate(data)
    except ValidationError as exc:
        raise validation_to_user_error(exc, "sweep", source=source, marks={}) from None


def _cell_spec(view: ExperimentView, cell: GridCell, seed: int | None) -> GridSpec:
    """The GridSpec of one run, built as `llm-sim run` builds it from the experiment with the
    cell's memory level set over its memory block (so the spec holds the resolved block and
    its notes); a cell that cannot run is one UserError naming it."""
    if cell.memory is not None:
        experiment = view.experiment
        assert isinstance(experiment, GridExperiment)
        memory = cell_memory(cell, experiment)
        view = dataclasses.replace(
            view, experiment=experiment.model_copy(update={"memory": memory})
        )
    try:
        return grid_runs.build_spec(
            view,
            llm=cell.llm,
            seed=seed,
            world={"agents": cell.agents, "steps": cell.steps, "radius": cell.radius},
        )
    except UserError as exc:
        raise UserError(
            f"the cell {cell.label()} cannot run: {exc.message}", field="sweep", fix=exc.fix
        ) from None


def plan(store: Store, view: ExperimentView, spec: GridSweepSpec, owner: str) -> Plan:
    """What the sweep will run, without writing anything."""
    experiment = view.experiment
    assert isinstance(experiment, GridExperiment)
    planned = expand(spec, experiment, view.version, owner)
    notes: dict[str, None] = {}
    kinds: dict[GridCell, MemoryKind] = {}  # each cell's memory kind decides its calls
    for cell in cells(spec, experiment):  # every cell can run before anything is stored
        built = _cell_spec(view, cell, spec.run_seeds()[0])
        notes.update(dict.fromkeys(built.defaults_applied))
        kinds[cell] = built.memory.kind
    stored = frozenset(store.sweeps.existing_keys([p.key for p in planned]))
    axes = [
        f"{name}: {', '.join(str(v) for v in values)}"
        for name, values in (
            ("llm", spec.llms),
            ("agents", spec.agents),
            ("steps", spec.steps),
            ("radius", spec.radius),
            ("memory", spec.memory),
            ("seeds", spec.seeds),
        )
        if values
    ]
    if not spec.seeds:
        axes.append(f"repetitions: {spec.repetitions}")
    cell_count = len({p.cell_key for p in planned})
    return Plan(
        cell_count,
        len(planned),
        sum(
            calls_per_run(p.cell, kinds[p.cell], view.experiment.probe, view.experiment.personality)
            for p in planned
        ),
        len(stored),
        planned[0].cell,  # type: ignore[arg-type]
        planned,  # type: ignore[arg-type]
        list(notes),
        "grid sweep; " + "; ".join(axes),
        stored,
        calls_at_least="stream" in kinds.values(),  # a stream's ratings and reflections
    )


def create(
    store: Store, view: ExperimentView, spec: GridSweepSpec, user: str, prepared: Plan | None = None
) -> tuple[dict, int]:
    """Create the sweep (or find the identical one) and store every run not yet stored."""
    the_plan = prepared if prepared is not None else plan(store, view, spec, user)

    def run_document(p, fields: dict) -> dict:  # the experiment's snapshot as saved
        return grid_runs.run_document(view, _cell_spec(view, p.cell, p.seed), user, fields)

    return world_sweeps.store_sweep(store, view, spec, user, the_plan, "grid", run_document)
