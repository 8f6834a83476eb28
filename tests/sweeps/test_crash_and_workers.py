"""Real processes: a sweep killed with SIGKILL at random moments resumes to an exact finish, and
two workers share one sweep without running any conversation twice."""

from __future__ import annotations

import json
import random
import signal
import time

import pytest
from sweep_processes import MESSAGES, check_exact_finish, cli, make_sweep

from simulator.store.database import open_database
from simulator.store.store import open_store


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume(tmp_path, stub, prison_path):
    db = str(tmp_path / "store")
    sweep_id = make_sweep(db, prison_path, repetitions=12)
    rng = random.Random(1234)
    kills = 0
    for _ in range(4):
        proc = cli(db, stub, "sweep", "run", sweep_id, "--concurrency", "4")
        time.sleep(rng.uniform(1.0, 2.0))
        if kills == 0 and proc.poll() is None:  # `sweep status` from another process, mid-run
            watcher = cli(db, stub, "sweep", "status", sweep_id, "--json")
            out, err = watcher.communicate(timeout=60)
            assert watcher.returncode == 0, err
            assert json.loads(out)["total"] == 12
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=30)
    assert kills >= 2
    resumed = cli(db, stub, "sweep", "resume", sweep_id, "--concurrency", "4", "--json")
    out, err = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, err
    assert json.loads(out)["complete"]
    conversations = check_exact_finish(db, sweep_id)
    assert max(c["claims"] for c in conversations) >= 2  # some were taken over after a kill


@pytest.mark.slow
@pytest.mark.parametrize("flavour", ["embedded", "wire"])
def test_two_workers_share_a_sweep_without_running_anything_twice(
    tmp_path, stub, prison_path, flavour, request
):
    db = (
        str(tmp_path / "store") if flavour == "embedded" else request.getfixturevalue("wire_server")
    )
    db_name = f"two_workers_{tmp_path.name}"[:60]
    sweep_id = make_sweep(db, prison_path, repetitions=10, db_name=db_name)
    workers = [
        cli(db, stub, "sweep", "work", sweep_id, "--concurrency", "3", db_name=db_name)
        for _ in range(2)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=240)
        assert worker.returncode == 0, err
    conversations = check_exact_finish(db, sweep_id, db_name)
    assert all(c["claims"] == 1 for c in conversations)
    assert len({c["last_worker"] for c in conversations}) == 2  # both did work
    store = open_store(open_database(db, db_name))
    try:
        for conv in conversations:
            turns = store.db.calls.count_documents(
                {"conversation_id": conv["_id"], "purpose": "agent_turn"}
            )
            assert turns == MESSAGES  # every turn called exactly once: nothing ran twice
    finally:
        store.close()
