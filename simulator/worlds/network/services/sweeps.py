"""Sweeps of opinion-network experiments: plan and create (idempotent; services/world_sweeps.py
stores them), then the shared runner runs them, each run as the LLM or the theory it is."""

from __future__ import annotations

from pydantic import ValidationError

from simulator.domain.yaml_io import validation_to_user_error
from simulator.errors import UserError
from simulator.services import world_sweeps
from simulator.services.experiments import ExperimentView
from simulator.services.sweeps import Plan
from simulator.store.store import Store
from simulator.worlds.network.domain.experiment import NetworkExperiment, NetworkSpec
from simulator.worlds.network.domain.sweep import NetworkCell, NetworkSweepSpec, cells, expand
from simulator.worlds.network.services import runs as network_runs


def validate_spec(data: dict, source: str | None = None) -> NetworkSweepSpec:
    try:
        return NetworkSweepSpec.model_validate(data)
    except ValidationError as exc:
        raise validation_to_user_error(exc, "sweep", source=source, marks={}) from None


def cell_spec(view: ExperimentView, cell: NetworkCell, seed: int | None) -> NetworkSpec:
    """The NetworkSpec of one run; a cell that cannot run is one UserError naming it."""
    try:
        return network_runs.build_spec(
            view,
            llm=None if cell.is_theory else cell.llm,
            seed=seed,
            settings=cell.settings(),
            theory=cell.is_theory,
        )
    except UserError as exc:
        raise UserError(
            f"the cell {cell.label()} cannot run: {exc.message}", field="sweep", fix=exc.fix
        ) from None


def plan(store: Store, view: ExperimentView, spec: NetworkSweepSpec, owner: str) -> Plan:
    """What the sweep will run, without writing anything: every cell is built once first."""
    experiment = view.experiment
    assert isinstance(experiment, NetworkExperiment)
    planned = expand(spec, experiment, view.version, owner)
    first_seed = spec.run_seeds()[0]
    notes: dict[str, None] = {}
    calls: dict[str, int] = {}
    streams = False  # a memory stream's calls (ratings, reflections) no plan can count
    for cell in cells(spec, experiment):
        built = cell_spec(view, cell, first_seed)
        calls[cell.label()] = built.calls
        streams = streams or (built.memory.is_stream and not built.is_theory)
        notes.update(dict.fromkeys(_sweep_notes(built)))
    stored = frozenset(store.sweeps.existing_keys([p.key for p in planned]))
    axes = [
        f"{name}: {', '.join(str(v) for v in values)}"
        for name, values in (
            ("llm", spec.llms),
            ("graphs", [len(spec.graphs)] if spec.graphs else []),
            ("scenarios", spec.scenarios),
            ("agents", spec.agents),
            ("groups", spec.groups),
            ("rounds", spec.rounds),
            ("seeds", spec.seeds),
        )
        if values
    ]
    if not spec.seeds:
        axes.append(f"repetitions: {spec.repetitions}")
    axes.append(
        "theory twins: yes (one per graph, scenario, table, rounds and seed)"
        if spec.theory
        else "theory twins: no (theory: false)"
    )
    return Plan(
        len({p.cell_key for p in planned}),
        len(planned),
        sum(calls[p.cell.label()] for p in planned),
        len(stored),
        planned[0].cell,  # type: ignore[arg-type]
        planned,  # type: ignore[arg-type]
        list(notes),
        "network sweep; " + "; ".join(axes),
        stored,
        calls_at_least=streams,
    )


def _sweep_notes(spec: NetworkSpec) -> list[str]:
    """A cell's defaults, except the seed a theory run drew for this plan alone (each run
    draws its own when the sweep gives no seed; the plan says so once)."""
    return [
        "seed: none given; each theory run draws one and stores it"
        if note.startswith("seed: none given; the theory drew")
        else note
        for note in spec.defaults_applied
    ]


def create(
    store: Store,
    view: ExperimentView,
    spec: NetworkSweepSpec,
    user: str,
    prepared: Plan | None = None,
) -> tuple[dict, int]:
    """Create the sweep (or find the identical one) and store every run not yet stored."""
    the_plan = prepared if prepared is not None else plan(store, view, spec, user)
    by_cell: dict[str, NetworkSpec] = {}

    def run_document(p, fields: dict) -> dict:
        base = by_cell.get(p.cell_key)
        if base is None or (p.seed is None and p.cell.is_theory):  # it draws its own seed
            base = by_cell[p.cell_key] = cell_spec(view, p.cell, p.seed)
        one = base if base.seed == p.seed else base.model_copy(update={"seed": p.seed})
        return network_runs.run_document(view, one, user) | fields

    return world_sweeps.store_sweep(store, view, spec, user, the_plan, "network", run_document)
