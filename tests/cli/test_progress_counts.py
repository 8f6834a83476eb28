"""Sweep progress is kept from the worker's own outcomes, not by counting the store each tick.

Before: the runner counted every conversation of the sweep in the store every 5 s of progress
(232 ms each time at a few thousand conversations on the embedded store). Now it counts at the
start and at the end, and in between at most every 30 s (to see other workers' progress) and
never more often than 100x what one count costs. The clock the runner reads is a fake one that
moves a second per reading, so the test needs no real waiting.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import types

import pytest

from simulator.cli.sweep_progress import describe
from simulator.engine import sweep_runner
from simulator.engine.sweep_runner import SweepProgress
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.services.sweep_runs import SweepRunner
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec

CONVERSATIONS = 24


@pytest.fixture
def fake_clock(monkeypatch) -> itertools.count:
    """The runner's time.monotonic() advances one second per call; perf_counter stays real."""
    ticks = itertools.count()
    fake = types.SimpleNamespace(
        monotonic=lambda: float(next(ticks)), perf_counter=time.perf_counter
    )
    monkeypatch.setattr(sweep_runner, "time", fake)
    return ticks


def test_progress_between_start_and_end_does_not_recount_the_store(
    tmp_path, prison_path, fake_clock
):
    store = open_store_uri(str(tmp_path / "store"))
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=4,
        agents={"Guard": 1, "Prisoner": 1},
        llms=["mock:a"],
        repetitions=CONVERSATIONS,
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")

    counted = 0
    real_count = store.sweeps.status_counts

    def counting(sweep_id: str) -> dict[str, int]:
        nonlocal counted
        counted += 1
        return real_count(sweep_id)

    store.sweeps.status_counts = counting
    seen: list[tuple[SweepProgress, int]] = []

    def on_progress(p: SweepProgress) -> None:
        # what the store holds right now, read past the counting wrapper
        seen.append((p, real_count(sweep["_id"]).get("done", 0)))
        describe(p)  # the display's line can be built from it

    runner = SweepRunner(
        store,
        sweep["_id"],
        LLMAccess(policy=RetryPolicy.no_wait()),
        concurrency=2,
        poll_s=0.01,
        progress_every_s=1.0,
        on_progress=on_progress,
    )

    async def go() -> SweepProgress:
        try:
            return await runner.run()
        finally:
            await runner.llms.aclose()

    final = asyncio.run(go())
    elapsed = seen[-1][0].elapsed_s  # seconds of the fake clock
    assert len(seen) >= CONVERSATIONS // 2, "progress was reported along the way"
    # start, end, the idle check before leaving, and one per 30 fake seconds at most
    assert counted <= 3 + elapsed // 30, (counted, elapsed)
    assert final.done == CONVERSATIONS and final.failed == 0 and final.remaining == 0
    dones = [p.done for p, _ in seen]
    assert dones == sorted(dones)  # never goes back
    for p, in_store in seen:  # kept from events, it never runs ahead of the store
        assert p.done <= in_store and p.total == CONVERSATIONS
    assert any(0 < p.done < CONVERSATIONS for p, _ in seen)  # and it moved in between
