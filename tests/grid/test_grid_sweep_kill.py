"""A grid sweep (radius 0, 5, 25 x 2 seeds) killed with SIGKILL mid-step resumes to an exact
finish: every run whole, every call answered once, positions where arithmetic says."""

from __future__ import annotations

import json
import signal
import time
from collections import Counter

import pytest
from grid_helpers import cli, grid_view, scripted
from process_waits import cli_here

from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.grid.domain.sweep import GridSweepSpec
from simulator.worlds.grid.services import sweeps as grid_sweeps

AGENTS, STEPS = 4, 4


@pytest.mark.slow
def test_sigkill_mid_step_then_resume(tmp_path):
    db = str(tmp_path / "store")
    with StubLLMServer(models=["stub"], latency_s=0.05) as stub:
        stub.reply_fn = scripted("y+1")
        store = open_store(open_database(db, "llm_simulator"))
        try:
            view = grid_view(store)
            spec = GridSweepSpec(
                llms=["openai:stub"],
                agents=[AGENTS],
                steps=[STEPS],
                radius=[0, 5, 25],
                seeds=[1, 2],
            )
            sweep, added = grid_sweeps.create(store, view, spec, "alice")
            assert added == 6
        finally:
            store.close()
        total_calls = 6 * 3 * AGENTS * STEPS
        proc = cli(db, stub, "sweep", "run", sweep["_id"], "--concurrency", "2")
        deadline = time.monotonic() + 120
        while len(stub.chat_requests) < total_calls // 3 and time.monotonic() < deadline:
            time.sleep(0.02)  # wait for calls to have happened, not for a time
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        sent_before = len(stub.chat_requests)
        resumed = cli_here(
            db, stub, "sweep", "resume", sweep["_id"], "--concurrency", "3", "--json"
        )
        out, err = resumed.stdout, resumed.stderr
        assert resumed.returncode == 0, err
        assert json.loads(out)["complete"]
        sent_after = len(stub.chat_requests) - sent_before

    store = open_store(open_database(db, "llm_simulator"))
    try:
        runs = store.sweeps.conversations(sweep["_id"])
        assert len(runs) == 6 and {r["status"] for r in runs} == {"done"}
        answered = 0
        for run in runs:
            rows = store.grid_steps.for_run(run["_id"])
            assert [(r["step"], r["agent_index"]) for r in rows] == [
                (s, a) for s in range(1, STEPS + 1) for a in range(AGENTS)
            ]
            for start, row in zip(run["spec"]["start"], rows[-AGENTS:], strict=True):
                assert row["position_after"] == [start[0], (start[1] + STEPS) % 50]
            calls = store.calls.for_conversation(run["_id"])
            done = Counter(
                (c["purpose"], c["day"], c["agent"]) for c in calls if c["state"] == "done"
            )
            assert len(done) == 3 * AGENTS * STEPS and set(done.values()) == {1}
            answered += len(done)
        assert answered == total_calls
        # the resume sent only what had no stored answer (calls killed in flight are resent)
        assert sent_after <= total_calls - sent_before + 2 * AGENTS  # 2 runs x a stage in flight
        assert max(r["claims"] for r in runs) >= 2  # some runs were taken over after the kill
        # the same seed starts every radius from the same cells
        by_seed = {}
        for run in runs:
            by_seed.setdefault(run["spec"]["seed"], set()).add(json.dumps(run["spec"]["start"]))
        assert {seed: len(starts) for seed, starts in by_seed.items()} == {1: 1, 2: 1}
    finally:
        store.close()
