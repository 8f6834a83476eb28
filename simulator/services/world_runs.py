"""What every world's run shares, whatever its rules: the stored run document, its creation
and the model check before anything is written (grid_runs and network_runs use these)."""

from __future__ import annotations

from simulator.domain.experiment import LLMChoice
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.base import FatalBackendError
from simulator.services.experiments import ExperimentView
from simulator.store.store import Store
from simulator.worlds.network.domain.experiment import THEORY


def run_document(
    kind: str,
    view: ExperimentView,
    spec: dict,
    names: list[str],
    llm: LLMChoice | None,
    user: str,
    extra: dict | None = None,
) -> dict:
    """The fields of a stored run of `kind` (the store adds id, status, counters and times):
    the spec whole, a snapshot of the experiment, and one agent entry per name (`llm` None:
    a theory run, whose agents' model is "theory")."""
    return {
        "kind": kind,
        "experiment_id": view.id,
        "experiment_version": view.version,
        "owner": user,
        "spec": spec,
        "experiment": view.experiment.model_dump(mode="json"),
        "agents": [
            {
                "name": name,
                "index": i,
                "model": llm.model if llm else THEORY,
                "llm_label": llm.key if llm else THEORY,
            }
            for i, name in enumerate(names)
        ],
        **(extra or {}),
    }


def create(store: Store, document: dict, user: str) -> dict:
    """Store a pending run document for `user`."""
    store.users.ensure(user)
    return store.conversations.create(document)


async def preflight(choice: LLMChoice, llms: LLMAccess) -> None:
    """Check the model before anything is written; a failure is a UserError (exit 2)."""
    try:
        await llms.preflight([choice])
    except FatalBackendError as exc:
        raise UserError(str(exc)) from None
