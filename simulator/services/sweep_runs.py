"""The sweep runner wired to services: each claimed document runs as its world runs it.

The engine's runner (engine/sweep_runner.py) claims, leases, heartbeats and counts; what one
run is (a group chat, a grid, an opinion network or its theory) is the world's
(services/sweep_parts.SweepPart.runner), read from the sweep's experiment snapshot, which is
parsed once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from simulator.engine.sweep_runner import RunOne
from simulator.engine.sweep_runner import SweepRunner as EngineSweepRunner
from simulator.llm.access import LLMAccess
from simulator.services.spend import SweepMeter, metered
from simulator.services.sweep_leases import StoreLeases
from simulator.services.sweep_parts import sweep_part
from simulator.store.store import Store
from simulator.worlds import kind_of


def run_function(
    store: Store, sweep_id: str, llms: LLMAccess, meter: SweepMeter | None = None
) -> RunOne:
    """What runs one claimed document of this sweep."""
    snapshot = store.sweeps.get(sweep_id)["experiment"]
    run_stored = sweep_part(kind_of(snapshot)).runner(snapshot)
    meter = meter or SweepMeter(store, sweep_id)

    async def run_one(
        doc: dict, stop: asyncio.Event, on_call: Callable[[dict], None], lease_owner: str
    ) -> str:
        heard = metered(meter, on_call)  # the sweep's spend counters, per call
        outcome = await run_stored(
            store, doc["_id"], llms, stop=stop, on_call=heard, lease_owner=lease_owner, doc=doc
        )
        return outcome.status

    return run_one


class SweepRunner(EngineSweepRunner):
    """`SweepRunner(store, sweep_id, llms, …)`: the engine's runner on the store's leases, with
    the run function of this sweep's world."""

    def __init__(
        self,
        store: Store,
        sweep_id: str,
        llms: LLMAccess,
        meter: SweepMeter | None = None,
        **options: Any,
    ) -> None:
        self.meter = meter or SweepMeter(store, sweep_id)  # this worker's share of the spend
        if options.get("run_one") is None:
            options["run_one"] = run_function(store, sweep_id, llms, self.meter)
        super().__init__(StoreLeases(store), sweep_id, llms, **options)

    async def run(self):  # type: ignore[override]
        try:
            return await super().run()
        finally:
            self.meter.flush()  # what this worker spent since its last flush
