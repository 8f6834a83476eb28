"""`llm-sim sweep status` counts by status, sums calls and tokens, names the workers and the
first failures with a handful of queries: it never loads the sweep's conversation documents."""

from __future__ import annotations

import pytest

from simulator.services import sweeps as sweep_service
from simulator.store.repositories.sweeps import SweepsRepository
from simulator.store.store import open_store_uri

MIXED = {"done": 9, "failed": 55, "running": 3, "interrupted": 2}  # the rest stay pending


@pytest.fixture
def sweep(sim, tmp_path, prison_path) -> dict:
    """A sweep of 80 conversations, set to mixed statuses with counters, as workers leave them."""
    db = str(tmp_path / "store")
    exp_id = sim("experiment", "create", str(prison_path), "--json", db=db).json()["id"]
    created = sim(
        "sweep", "create", exp_id, "--llm", "mock:a", "--messages", "4", "--days", "1",
        "--agents", "Guard=1,Prisoner=1", "--repetitions", "80", "--json", db=db,
    )  # fmt: skip
    assert created.code == 0, created.err
    sweep_id = created.json()["sweep_id"]
    store = open_store_uri(db)
    try:
        docs = store.sweeps.conversations(sweep_id)
        ids = [d["_id"] for d in docs]  # in sweep order
        at = 0
        for status, n in MIXED.items():
            for i, cid in enumerate(ids[at : at + n]):
                changes = {"status": status, "counters": {"calls": 4, "tokens_out": 10 + i}}
                if status == "failed":
                    changes["error"] = f"boom {at + i}"
                if status == "running":
                    changes["lease_owner"] = f"host:{100 + i % 2}:w"  # two workers
                store.db.conversations.update_one({"_id": cid}, {"$set": changes})
            at += n
    finally:
        store.close()
    return {"db": db, "sweep": sweep_id, "ids": ids}


def expected_tokens() -> int:
    return sum(10 + i for n in MIXED.values() for i in range(n))


def test_status_counts_calls_tokens_workers_and_failures(sim, sweep):
    result = sim("sweep", "status", sweep["sweep"], "--json", db=sweep["db"])
    assert result.code == 0, result.err
    status = result.json()
    assert status["total"] == 80
    assert status["counts"] == {
        "pending": 80 - sum(MIXED.values()),
        "running": 3,
        "done": 9,
        "failed": 55,
        "interrupted": 2,
    }
    assert not status["complete"]
    assert status["calls"] == 4 * sum(MIXED.values())
    assert status["tokens_out"] == expected_tokens()
    assert status["workers"] == ["host:100:w", "host:101:w"]
    failed = sweep["ids"][9 : 9 + 55]
    assert [f["id"] for f in status["failed"]] == failed[:50]  # the first 50, in sweep order
    assert status["failed"][0]["error"] == "boom 9"


def test_status_does_not_load_the_conversations(sweep, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("status loaded every conversation of the sweep")

    monkeypatch.setattr(SweepsRepository, "conversations", refuse)
    store = open_store_uri(sweep["db"])
    try:
        status = sweep_service.status(store, sweep["sweep"])
    finally:
        store.close()
    assert status["counts"]["failed"] == 55 and status["total"] == 80
    assert status["tokens_out"] == expected_tokens()


def test_a_finished_sweep_is_complete_with_no_workers(sim, sweep):
    store = open_store_uri(sweep["db"])
    try:
        store.db.conversations.update_many(
            {"sweep_id": sweep["sweep"]}, {"$set": {"status": "done", "lease_owner": None}}
        )
    finally:
        store.close()
    status = sim("sweep", "status", sweep["sweep"], "--json", db=sweep["db"]).json()
    assert status["complete"] and status["counts"]["done"] == 80
    assert status["workers"] == [] and status["failed"] == []


def test_status_totals_on_every_store(store):
    """One $match/$group aggregation gives the same counts and sums on all three flavours."""
    docs = [
        {"_id": f"conv_s{i:03d}", "key": f"k{i}", "schema_version": 1, "sweep_id": "sweep_x",
         "order": i, "status": ("done", "failed", "pending")[i % 3],
         "counters": {"calls": 2, "tokens_out": i} if i % 3 != 2 else {}}
        for i in range(12)
    ]  # fmt: skip
    assert store.sweeps.insert_conversations(docs) == 12
    totals = store.sweeps.status_totals("sweep_x")
    assert totals == {
        "done": {"n": 4, "calls": 8, "tokens_out": 0 + 3 + 6 + 9},
        "failed": {"n": 4, "calls": 8, "tokens_out": 1 + 4 + 7 + 10},
        "pending": {"n": 4, "calls": 0, "tokens_out": 0},
    }
    assert [d["_id"] for d in store.sweeps.failed_page("sweep_x", 2)] == ["conv_s001", "conv_s004"]
    assert store.sweeps.running_owners("sweep_x") == []


def test_the_plain_status_names_each_failure_with_its_cell_and_error(sim, sweep):
    """Brackets in a cell or an error and colons in a worker's name are printed as they are, not
    read as console markup or emoji codes (`host:100:w` once showed a 💯)."""
    store = open_store_uri(sweep["db"])
    try:
        first = sweep["ids"][9]
        store.db.conversations.update_one(
            {"_id": first}, {"$set": {"error": "bad [bold]reply[/bold] [None]"}}
        )
        cell = store.db.conversations.find_one({"_id": first})["cell_label"]
    finally:
        store.close()
    result = sim("sweep", "status", sweep["sweep"], db=sweep["db"])
    assert result.code == 0, result.err
    assert f"failed {first} [{cell}]: bad [bold]reply[/bold] [None]" in result.out
    assert "worker: host:100:w" in result.out and "worker: host:101:w" in result.out
