"""The sweep runner wired to services: each claimed document runs as the kind it is.

The engine's runner (engine/sweep_runner.py) claims, leases, heartbeats and counts; what one
run is (a group chat, a grid, an opinion network or its theory) is decided here, from the
document's `kind`, with the sweep's experiment snapshot parsed once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from simulator.domain.experiment import Experiment
from simulator.engine.sweep_runner import RunOne
from simulator.engine.sweep_runner import SweepRunner as EngineSweepRunner
from simulator.llm.access import LLMAccess
from simulator.services.sweep_leases import StoreLeases
from simulator.store.store import Store
from simulator.worlds.chat.services import runs as conversations
from simulator.worlds.grid.domain.experiment import GridExperiment, is_grid
from simulator.worlds.grid.services import runs as grid_runs
from simulator.worlds.network.domain.experiment import is_network
from simulator.worlds.network.services import runs as network_runs


def run_function(store: Store, sweep_id: str, llms: LLMAccess) -> RunOne:
    """What runs one claimed document of this sweep."""
    snapshot = store.sweeps.get(sweep_id)["experiment"]
    grid = GridExperiment.from_stored(snapshot) if is_grid(snapshot) else None
    plain = grid is None and not is_network(snapshot)
    chat = Experiment.from_stored(snapshot) if plain else None

    async def run_one(
        doc: dict, stop: asyncio.Event, on_call: Callable[[dict], None], lease_owner: str
    ) -> str:
        if is_network(doc):
            outcome = await network_runs.run(
                store,
                doc["_id"],
                llms,
                stop=stop,
                on_call=on_call,
                lease_owner=lease_owner,
                doc=doc,
            )
        elif is_grid(doc):
            outcome = await grid_runs.run(
                store,
                doc["_id"],
                llms,
                stop=stop,
                experiment=grid,
                on_call=on_call,
                lease_owner=lease_owner,
                doc=doc,
            )
        else:
            outcome = await conversations.run(
                store,
                doc["_id"],
                llms,
                stop=stop,
                experiment=chat,
                on_call=on_call,
                lease_owner=lease_owner,
                doc=doc,
            )
        return outcome.status

    return run_one


class SweepRunner(EngineSweepRunner):
    """`SweepRunner(store, sweep_id, llms, …)`: the engine's runner on the store's leases, with
    the run function of this sweep's kind."""

    def __init__(self, store: Store, sweep_id: str, llms: LLMAccess, **options: Any) -> None:
        if options.get("run_one") is None:
            options["run_one"] = run_function(store, sweep_id, llms)
        super().__init__(StoreLeases(store), sweep_id, llms, **options)
