"""Running a stored sweep in this process, with its progress display: what `llm-sim sweep run`,
`resume`, `work` and `retry-failed` do, and what the interactive sweep menu does after it
creates a sweep."""

from __future__ import annotations

import asyncio
import os

from simulator.cli.caps import exit_if_capped
from simulator.cli.commands.sweep_options import pools_header
from simulator.cli.context import AppContext
from simulator.cli.interrupts import run_until_stopped
from simulator.cli.params import heartbeat_for, pool_sizes
from simulator.cli.sweep_progress import SweepDisplay, describe
from simulator.domain.budget import Caps
from simulator.domain.plural import count
from simulator.engine.budget import using
from simulator.llm.access import LLMAccess
from simulator.llm.retry import PoolRegistry
from simulator.services import sweeps as service
from simulator.services.spend import (
    SweepMeter,
    require_embedder_prices,
    require_prices,
    sweep_budget,
    sweep_caps,
    sweep_embedders,
    sweep_models,
)
from simulator.services.sweep_runs import SweepRunner


def run_sweep(
    app: AppContext,
    sweep_id: str,
    concurrency: int,
    pools: tuple[str, ...],
    lease_ttl: float,
    as_json: bool,
    verb: str,
    caps: Caps | None = None,
) -> None:
    """Run SWEEP_ID until every conversation is done or failed (or Ctrl-C), then print its
    status. `verb` ("Running", "Resuming", "Working on", "Retrying") opens the header line."""
    action = {"Resuming": "resume", "Working on": "work on", "Retrying": "retry"}.get(verb, "run")
    service.require_owner(app.store, sweep_id, app.user, action)
    sizes = pool_sizes(pools)
    caps = sweep_caps(app.store, sweep_id, caps)  # the command's over the sweep file's
    if caps.any():
        require_prices(sweep_models(app.store, sweep_id), caps)
        require_embedder_prices(sweep_embedders(app.store, sweep_id), caps)
    meter = SweepMeter(app.store, sweep_id)
    budget = sweep_budget(meter, caps)
    if not as_json:
        app.err.print(pools_header(verb, sweep_id, concurrency, sizes), markup=False)

    async def go(stop: asyncio.Event):
        with SweepDisplay(
            app.console, quiet=as_json, plain_every_s=float(os.environ.get("SIM_PROGRESS_EVERY", 5))
        ) as display:
            pools = PoolRegistry(sizes=sizes, concurrency=concurrency, on_open=display.pool_opened)
            llms = LLMAccess(pools=pools)
            if budget is not None:
                budget.stop = stop  # a cap reached: this worker claims no more
            runner = SweepRunner(
                app.store,
                sweep_id,
                llms,
                concurrency=concurrency,
                lease_ttl_s=lease_ttl,
                heartbeat_s=heartbeat_for(lease_ttl),
                on_progress=display,
                stop=stop,
                budget=budget,
                meter=meter,
            )
            try:
                with using(budget):  # every call checks the sweep's spend before it leaves
                    return await runner.run()
            finally:
                await llms.aclose()

    progress = run_until_stopped(go, app.err, _SweepNote(app, sweep_id))
    status = service.status(app.store, sweep_id)
    if as_json:
        app.print_json(status)
    else:
        app.console.print(describe(progress))
    exit_if_capped(
        app,
        budget,
        status["spend"],
        f"give a higher cap to finish it: llm-sim sweep resume {sweep_id} --max-cost N "
        "(or --max-tokens, --max-calls: the one reached)",
    )
    if status["counts"]["failed"]:
        app.err.print(
            f"{count(status['counts']['failed'], 'conversation')} failed; retry them with "
            f"llm-sim sweep retry-failed {sweep_id}"
        )


class _SweepNote:
    """What a stopped sweep says: its counts, and `sweep resume`."""

    def __init__(self, app: AppContext, sweep_id: str) -> None:
        self._app = app
        self._sweep_id = sweep_id

    def line(self) -> str:
        counts = service.status(self._app.store, self._sweep_id)["counts"]
        return (
            f"Stopped: {counts['done']} done, {counts['interrupted']} interrupted (resumable). "
            f"Finish it with llm-sim sweep resume {self._sweep_id}"
        )

    def resume(self) -> str:
        return f"run `llm-sim sweep resume {self._sweep_id}`"
