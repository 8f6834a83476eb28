"""A sweep told to stop by SIGTERM (`docker stop`, systemd, a batch scheduler's time limit)
stops as with Ctrl-C: its conversations `interrupted`, their leases released, their requests in
flight cancelled in the ledger, exit status 143; `sweep resume` then finishes it exactly."""

from __future__ import annotations

import json

import pytest
from process_waits import cli_here, stored, terminate, wait_until
from sweep_processes import check_exact_finish, cli, make_sweep

from simulator.store.database import open_database
from simulator.store.store import open_store

SLOW_S = 120.0  # no reply comes before the signal: the stop must not wait for one


@pytest.mark.parametrize("verb", ["run", "work"])
def test_sigterm_stops_a_sweep_resumably(tmp_path, stub, prison_path, verb):
    db = str(tmp_path / "store")
    sweep_id = make_sweep(db, prison_path, repetitions=4)
    stub.latency_s = SLOW_S
    proc = cli(db, stub, "sweep", verb, sweep_id, "--concurrency", "2")
    in_flight = {"state": "in_flight"}
    wait_until(proc, lambda: len(stored(db, "calls", in_flight)) >= 2, "two calls in flight")
    _, err = terminate(proc, SLOW_S / 2)
    assert "Traceback" not in err
    stopped = [line for line in err.splitlines() if line.startswith("Stopped")]
    assert stopped == [
        f"Stopped: 0 done, 2 interrupted (resumable). Finish it with llm-sim sweep resume "
        f"{sweep_id}"
    ], err

    store = open_store(open_database(db, "llm_simulator"))
    try:
        conversations = store.sweeps.conversations(sweep_id)
        assert sorted(c["status"] for c in conversations) == [
            "interrupted",
            "interrupted",
            "pending",
            "pending",
        ]
        assert all(c.get("lease_owner") is None for c in conversations)  # leases released
        calls = list(store.db.calls.find({}))
        assert [c["state"] for c in calls] == ["failed", "failed"]  # none left in flight
        assert {c["error_kind"] for c in calls} == {"cancelled"}
    finally:
        store.close()

    stub.latency_s = 0.05
    resumed = cli_here(db, stub, "sweep", "resume", sweep_id, "--concurrency", "2", "--json")
    out, err = resumed.stdout, resumed.stderr
    assert resumed.returncode == 0, err
    assert json.loads(out)["complete"]
    check_exact_finish(db, sweep_id)
