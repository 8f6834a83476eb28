"""What a world tells the runs service (services/runs.py): how its run is planned, stored,
checked and stepped.

Each world's `services/runs.py` is a module with these names (the registry's
`part(kind, "services.runs")`); the runs service reads them instead of naming a world. The
rest (storing the pending run, checking the models, handing the stored document on to the
run, resuming) is the house's and the same for every world.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from simulator.engine import events as ev
from simulator.llm.access import LLMAccess
from simulator.store.store import Store

if TYPE_CHECKING:
    from simulator.services.experiments import ExperimentView
    from simulator.services.runs import RunOutcome


class RunPart(Protocol):
    def plan(
        self,
        view: ExperimentView,
        options: dict[str, Any],
        *,
        llm: str | None = None,
        seed: int | None = None,
    ) -> BaseModel:
        """The spec of one run of the experiment: every choice fixed, the given `options`
        (the world's own settings by name; None: the experiment's) over the experiment's, every
        default that decides what runs noted. A bad or unknown option is one UserError."""

    def run_document(
        self, view: ExperimentView, spec: BaseModel, user: str, extra: dict | None = None
    ) -> dict:
        """The fields of a stored run (the store adds id, status, counters and times); see
        `runs.document` for the fields every world stores."""

    # optional: `models(spec) -> list[LLMChoice]`, the LLM entries the run calls, checked
    # before anything is stored (default: the spec's one `llm`; none: no check)

    async def run(
        self,
        store: Store,
        run_id: str,
        llms: LLMAccess,
        on_event: Callable[[ev.Event], None] = ...,
        stop: asyncio.Event | None = None,
        *,
        experiment: BaseModel | None = None,
        spec: BaseModel | None = None,
        on_call: Callable[[dict], None] | None = None,
        lease_owner: str | None = None,
        doc: dict | None = None,
    ) -> RunOutcome:
        """Run or resume one stored run. `doc`, `experiment` and `spec` are the stored
        document, its experiment and its spec when the caller holds them (read from the store
        and validated otherwise); a world may take more keywords of its own."""

    # optional: `stored_rows(store, doc) -> dict`, what `runs.transcript` shows of a stored
    # run besides its document (default: {"<unit>s": its rows}, the unit the domain's RUN_UNIT)


def run_part(kind: str) -> RunPart:
    """The world `kind`'s runs part (imported on first use)."""
    from simulator.worlds import part

    return part(kind, "services.runs")  # type: ignore[return-value]
