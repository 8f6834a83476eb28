"""Real processes: a sweep killed with SIGKILL at random moments resumes to an exact finish, and
two workers share one sweep without running any conversation twice."""

from __future__ import annotations

import contextlib
import json
import random
import signal
import threading
from collections.abc import Iterator

import pytest
from process_waits import PATIENCE_S, cli_here, stored, wait_until
from sweep_processes import MESSAGES, check_exact_finish, cli, make_sweep

from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer


@contextlib.contextmanager
def replies_held(stub: StubLLMServer) -> Iterator[None]:
    """The stub answers no chat request until the block ends (then a fixed line)."""
    release = threading.Event()

    def held(body: dict) -> str:
        release.wait(PATIENCE_S)
        return "I keep to the schedule."

    stub.reply_fn = held
    try:
        yield
    finally:
        stub.reply_fn = None
        release.set()


def _half_written(db: str, sweep_id: str, at_least: int):
    """A check for `wait_until`: the sweep has stored `at_least` messages, and some conversation
    is running with part of its transcript stored (a kill now interrupts it mid-way)."""

    def check() -> bool:
        if len(stored(db, "messages", {})) < at_least:
            return False
        running = stored(db, "conversations", {"sweep_id": sweep_id, "status": "running"})
        ids = [c["_id"] for c in running]
        return bool(ids) and bool(stored(db, "messages", {"conversation_id": {"$in": ids}}))

    return check


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume(tmp_path, stub, prison_path):
    """Each run is killed at a random point of progress, read from the store (never by the
    clock): after 2 to 8 more stored messages, with a conversation half-written."""
    db = str(tmp_path / "store")
    sweep_id = make_sweep(db, prison_path, repetitions=12)  # 12 x 8 messages
    rng = random.Random(1234)
    kills = 0
    for _ in range(4):
        target = len(stored(db, "messages", {})) + rng.randint(2, 8)
        proc = cli(db, stub, "sweep", "run", sweep_id, "--concurrency", "4")
        wait_until(proc, _half_written(db, sweep_id, target), f"{target} stored messages")
        if kills == 0:  # `sweep status` from another process (this one), mid-run
            with replies_held(stub):  # the run cannot finish while the status is read
                watcher = cli_here(db, stub, "sweep", "status", sweep_id, "--json")
                assert watcher.returncode == 0, watcher.stderr
                assert json.loads(watcher.stdout)["total"] == 12
                assert proc.poll() is None, proc.communicate()
                proc.send_signal(signal.SIGKILL)
        else:
            proc.send_signal(signal.SIGKILL)
        kills += 1
        proc.communicate(timeout=30)
    assert kills == 4
    resumed = cli_here(db, stub, "sweep", "resume", sweep_id, "--concurrency", "4", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["complete"]
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
