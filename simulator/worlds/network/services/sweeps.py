"""Sweeps of opinion-network experiments (services/sweep_parts.py): cells of models, graphs,
scenarios, tables and rounds x seeds, with a theory twin per cell; services/world_sweeps.py
plans and stores them, and the sweep runner runs each as the LLM or the theory it is."""

from __future__ import annotations

from typing import Any

from simulator.domain.world_sweep import PlannedRun
from simulator.services import world_sweeps
from simulator.services.experiments import ExperimentView
from simulator.services.sweep_parts import RunStored
from simulator.services.sweeps import Plan, validate_sweep
from simulator.store.store import Store
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.domain.sweep import NetworkCell, NetworkSweepSpec
from simulator.worlds.network.domain.sweep import expand as expand  # the part's expansion
from simulator.worlds.network.services import runs as network_runs

Spec = NetworkSweepSpec


def validate_spec(data: dict, source: str | None = None) -> NetworkSweepSpec:
    return validate_sweep(NetworkSweepSpec, data, source)


def build_run(view: ExperimentView, cell: NetworkCell, seed: int | None) -> NetworkSpec:
    """The NetworkSpec of one run of the cell: its LLM's, or the theory's."""
    return network_runs.build_spec(
        view,
        llm=None if cell.is_theory else cell.llm,
        seed=seed,
        settings=cell.settings(),
        theory=cell.is_theory,
    )


def cell_spec(view: ExperimentView, cell: NetworkCell, seed: int | None) -> NetworkSpec:
    """The NetworkSpec of one run; a cell that cannot run is one UserError naming it."""
    return world_sweeps.cell_run(build_run, view, cell, seed)


def axes(spec: NetworkSweepSpec) -> list[str]:
    named = (
        ("llm", spec.llms),
        ("graphs", [len(spec.graphs)] if spec.graphs else []),
        ("scenarios", spec.scenarios),
        ("agents", spec.agents),
        ("groups", spec.groups),
        ("rounds", spec.rounds),
        ("seeds", spec.seeds),
    )
    return [
        *world_sweeps.axes(spec, named),
        "theory twins: yes (one per graph, scenario, table, rounds and seed)"
        if spec.theory
        else "theory twins: no (theory: false)",
    ]


def calls_at_least(run: NetworkSpec) -> bool:
    """A memory stream's calls (ratings, reflections) no plan can count; the theory makes none."""
    return run.memory.is_stream and not run.is_theory


def plan_notes(run: NetworkSpec) -> list[str]:
    """A cell's defaults, except the seed a theory run drew for this plan alone (each run
    draws its own when the sweep gives no seed; the plan says so once)."""
    return [
        "seed: none given; each theory run draws one and stores it"
        if note.startswith("seed: none given; the theory drew")
        else note
        for note in run.defaults_applied
    ]


def run_document(
    view: ExperimentView, planned: PlannedRun, user: str, built: dict[str, Any]
) -> dict:
    """A run's fields; a cell's spec is built once and given each run's seed (a theory run
    without a seed draws its own, so it is built for each run)."""
    base = built.get(planned.cell_key)
    if base is None or (planned.seed is None and planned.cell.is_theory):
        base = built[planned.cell_key] = cell_spec(view, planned.cell, planned.seed)
    one = base if base.seed == planned.seed else base.model_copy(update={"seed": planned.seed})
    return network_runs.run_document(view, one, user)


def plan(store: Store, view: ExperimentView, spec: NetworkSweepSpec, owner: str) -> Plan:
    """What the sweep will run, without writing anything: every cell is built once first."""
    return world_sweeps.plan(store, view, spec, owner)


def create(
    store: Store,
    view: ExperimentView,
    spec: NetworkSweepSpec,
    user: str,
    prepared: Plan | None = None,
) -> tuple[dict, int]:
    """Create the sweep (or find the identical one) and store every run not yet stored."""
    return world_sweeps.create(store, view, spec, user, prepared)


def runner(snapshot: dict) -> RunStored:
    """Each run reads its own resolved spec (its table, scenario and graph)."""
    return network_runs.run
