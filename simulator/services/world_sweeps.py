"""What grid and network sweeps share: the sweep document and its runs, stored idempotently.

A world sweep is stored like a chat sweep (`sweeps`, with its `kind`) and its runs like
conversations (`conversations`, with the same `kind`), so claiming, leases, heartbeats,
resume, status and progress are the chat sweeps' own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from simulator.domain.ids import content_hash
from simulator.services.experiments import ExperimentView
from simulator.services.sweeps import Plan
from simulator.store.repositories.conversations import ConversationsRepository
from simulator.store.store import Store


def sweep_key(view: ExperimentView, spec: BaseModel, owner: str) -> str:
    identity = {"v": view.version, "spec": spec.model_dump(mode="json"), "owner": owner}
    return "s_" + content_hash(identity, 20)


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
