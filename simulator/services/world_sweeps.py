"""Sweeps of cells x seeds, each run one of a world's single runs: the plan, the sweep document
and its runs, stored idempotently (services/sweep_parts.CellSweepPart says what differs).

Such a sweep is stored like a chat sweep (`sweeps`, with its `kind`) and its runs like
conversations (`conversations`, with the same `kind`), so claiming, leases, heartbeats,
resume, status and progress are the chat sweeps' own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from simulator.domain.ids import content_hash
from simulator.errors import UserError
from simulator.services.experiments import ExperimentView
from simulator.services.sweep_parts import CellSweepPart, calls_at_least, plan_notes, sweep_part
from simulator.services.sweeps import Plan
from simulator.store.repositories.conversations import ConversationsRepository
from simulator.store.store import Store


def sweep_key(view: ExperimentView, spec: BaseModel, owner: str) -> str:
    identity = {"v": view.version, "spec": spec.model_dump(mode="json"), "owner": owner}
    return "s_" + content_hash(identity, 20)


def cell_run(
    build_run: Callable[[ExperimentView, Any, int | None], Any],
    view: ExperimentView,
    cell: Any,
    seed: int | None,
) -> Any:
    """The run spec of one run of `cell`; a cell that cannot run is one UserError naming it."""
    try:
        return build_run(view, cell, seed)
    except UserError as exc:
        raise UserError(
            f"the cell {cell.label()} cannot run: {exc.message}", field="sweep", fix=exc.fix
        ) from None


def axes(spec: Any, named: Sequence[tuple[str, Sequence[Any]]]) -> list[str]:
    """The breakdown of the axes a sweep varies (`name: v1, v2`), then its repetitions when it
    lists no seeds."""
    described = [f"{name}: {', '.join(str(v) for v in values)}" for name, values in named if values]
    if not spec.seeds:
        described.append(f"repetitions: {spec.repetitions}")
    return described


def _part(view: ExperimentView) -> CellSweepPart:
    return sweep_part(view.kind)  # type: ignore[return-value]


def plan(store: Store, view: ExperimentView, spec: Any, owner: str) -> Plan:
    """What the sweep will run, without writing anything: every cell is built once first (with
    the first seed), so a cell that cannot run is refused before anything is stored."""
    part = _part(view)
    planned = part.expand(spec, view.experiment, view.version, owner)
    first_seed = spec.run_seeds()[0]
    built: dict[str, Any] = {}
    notes: dict[str, None] = {}
    for p in planned:
        if p.cell_key not in built:
            run = built[p.cell_key] = cell_run(part.build_run, view, p.cell, first_seed)
            notes.update(dict.fromkeys(plan_notes(part, run)))
    stored = frozenset(store.sweeps.existing_keys([p.key for p in planned]))
    kind = view.kind
    return Plan(
        len(built),
        len(planned),
        sum(built[p.cell_key].calls for p in planned),
        len(stored),
        planned[0].cell,
        planned,  # type: ignore[arg-type]
        list(notes),
        f"{kind} sweep; " + "; ".join(part.axes(spec)),
        stored,
        calls_at_least=any(calls_at_least(part, run) for run in built.values()),
    )


def create(
    store: Store,
    view: ExperimentView,
    spec: Any,
    user: str,
    prepared: Plan | None = None,
) -> tuple[dict, int]:
    """Create the sweep (or find the identical one) and store every run not yet stored."""
    part = _part(view)
    the_plan = prepared if prepared is not None else part.plan(store, view, spec, user)
    built: dict[str, Any] = {}

    def run_document(planned: Any, fields: dict) -> dict:
        return part.run_document(view, planned, user, built) | fields

    return store_sweep(store, view, spec, user, the_plan, view.kind, run_document)


def store_sweep(
    store: Store,
    view: ExperimentView,
    spec: BaseModel,
    user: str,
    plan: Plan,
    kind: str,
    run_document: Callable[[Any, dict], dict],
) -> tuple[dict, int]:
    """Create the sweep (or find the identical one) and store every planned run not yet
    stored. `run_document(planned, sweep_fields)` gives a run's fields; it is called for
    every new run before anything is written, so a run that cannot be built writes nothing."""
    key = sweep_key(view, spec, user)
    existing = store.sweeps.find_by_key(key)
    pending = [(order, p) for order, p in enumerate(plan.planned) if p.key not in plan.stored_keys]
    built = [(order, p, run_document(p, {})) for order, p in pending]
    sweep = existing or store.sweeps.create(
        {
            "key": key,
            "kind": kind,
            "experiment_id": view.id,
            "experiment_version": view.version,
            "owner": user,
            "name": spec.name,  # type: ignore[attr-defined]
            "spec": spec.model_dump(mode="json"),
            "experiment": view.experiment.model_dump(mode="json"),
            "plan": plan.as_dict(),
        }
    )
    store.users.ensure(user)
    docs = (
        ConversationsRepository.new_document(
            {
                **fields,
                "key": p.key,
                "sweep_id": sweep["_id"],
                "order": order,
                "cell": p.cell.as_dict(),
                "cell_key": p.cell_key,
                "cell_label": p.cell.label(),
                "repetition": p.repetition,
                "lease_owner": None,
                "lease_expires_ms": 0,
                "claims": 0,
            }
        )
        for order, p, fields in built
    )
    return sweep, store.sweeps.insert_conversations(docs)
