"""Real processes: a sweep killed with SIGKILL at random moments resumes to an exact finish, and
two workers share one sweep without running any conversation twice."""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator.domain.sweep import SweepSpec
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer

REPO = Path(__file__).resolve().parents[2]
MESSAGES, DAYS = 8, 2


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub"], latency_s=0.1) as server:
        yield server


def cli(
    db: str, stub: StubLLMServer, *args: str, db_name: str = "llm_simulator"
) -> subprocess.Popen:
    env = {
        **os.environ,
        "SIM_DB": db,
        "SIM_DB_NAME": db_name,
        "SIM_USER": "alice",
        "OPENAI_BASE_URL": stub.openai_base_url,
        "PYTHONPATH": str(REPO),
        "SIM_PROGRESS_EVERY": "1000",
    }
    return subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def make_sweep(db: str, prison_path: Path, repetitions: int, db_name: str = "llm_simulator") -> str:
    store = open_store(open_database(db, db_name))
    try:
        view = exp_service.import_yaml(store, prison_path, "alice")
        spec = SweepSpec(
            total_messages=MESSAGES,
            days=DAYS,
            agents={"Guard": 1, "Prisoner": 2},
            llms=["openai:stub"],
            speaker_methods=["random"],
            repetitions=repetitions,
            seed=9,
        )
        sweep, _ = sweep_service.create(store, view, spec, "alice")
        return sweep["_id"]
    finally:
        store.close()


def check_exact_finish(db: str, sweep_id: str, db_name: str = "llm_simulator") -> list[dict]:
    store = open_store(open_database(db, db_name))
    try:
        conversations = store.sweeps.conversations(sweep_id)
        assert {c["status"] for c in conversations} == {"done"}
        for conv in conversations:
            messages = store.messages.for_conversation(conv["_id"])
            assert [m["seq"] for m in messages] == list(range(MESSAGES))
            assert [(m["day"], m["index"]) for m in messages] == [(1, i) for i in range(4)] + [
                (2, i) for i in range(4)
            ]
            assert len({m["_id"] for m in messages}) == MESSAGES
            assert [s["day"] for s in store.conversations.summaries(conv["_id"])] == [1, 2]
            assert all(
                a != b
                for a, b in itertools.pairwise(messages)
                if a["day"] == b["day"] and a["speaker"] == b["speaker"]
            )  # random: no immediate repeat, even across a crash
        return conversations
    finally:
        store.close()


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
