"""Running, resuming, joining or retrying a sweep is its owner's: another user is refused (exit
2, naming the owner) before any conversation is claimed, queued again or called."""

from __future__ import annotations

import pytest

from simulator.store.store import open_store_uri


@pytest.fixture
def alices_sweep(sim, tmp_path, prison_path) -> dict:
    db = str(tmp_path / "store")
    exp_id = sim("experiment", "create", str(prison_path), "--json", db=db).json()["id"]
    created = sim(
        "sweep", "create", exp_id, "--llm", "mock:a", "--messages", "4", "--days", "1",
        "--agents", "Guard=1,Prisoner=1", "--repetitions", "2", "--json", db=db,
    )  # fmt: skip
    assert created.code == 0, created.err
    return {"db": db, "sweep": created.json()["sweep_id"]}


def state(db: str, sweep_id: str) -> tuple[dict, int]:
    store = open_store_uri(db)
    try:
        convs = store.sweeps.conversations(sweep_id)
        statuses = {c["_id"]: (c["status"], c.get("claims"), c.get("lease_owner")) for c in convs}
        return statuses, store.db.calls.count_documents({})
    finally:
        store.close()


@pytest.mark.parametrize("command", ["run", "resume", "work", "retry-failed"])
def test_another_user_may_not_run_the_sweep(sim, alices_sweep, command):
    db, sweep_id = alices_sweep["db"], alices_sweep["sweep"]
    before = state(db, sweep_id)
    refused = sim("sweep", command, sweep_id, db=db, user="bob")
    assert refused.code == 2
    text = " ".join(refused.err.split())
    assert f"sweep {sweep_id} belongs to 'alice'" in text and "(you are 'bob')" in text
    assert "llm-sim sweep create" in text  # the way out: a sweep of their own
    assert state(db, sweep_id) == before  # nothing claimed, queued again or called


def test_the_owner_runs_it_and_others_may_still_read_it(sim, alices_sweep):
    db, sweep_id = alices_sweep["db"], alices_sweep["sweep"]
    assert sim("sweep", "status", sweep_id, "--json", db=db, user="bob").code == 0
    ran = sim("sweep", "run", sweep_id, "--json", db=db, user="alice")
    assert ran.code == 0, ran.err
    assert ran.json()["complete"]


def test_a_copy_with_the_same_content_says_whose_sweep_it_shares(sim, alices_sweep):
    """Conversations are keyed by what shapes them: the sweep of an unchanged copy is the
    original's, and `sweep create` says so instead of only "0 new conversations"."""
    db = alices_sweep["db"]
    listed = sim("experiment", "list", "--json", db=db).json()
    original = listed[0]["id"]
    copy = sim("experiment", "duplicate", original, "--json", db=db).json()["id"]
    args = ["--llm", "mock:a", "--messages", "4", "--days", "1", "--agents", "Guard=1,Prisoner=1"]
    again = sim("sweep", "create", copy, *args, "--repetitions", "2", "--json", db=db).json()
    assert again["sweep_id"] == alices_sweep["sweep"] and again["added"] == 0
    assert again["experiment_id"] == original
    said = sim("sweep", "create", copy, *args, "--repetitions", "2", "--yes", db=db)
    assert said.code == 0, said.err
    text = " ".join(said.out.split())
    assert f"{copy} shapes its conversations as your {original} does" in text
    own = sim("sweep", "create", copy, *args, "--repetitions", "2", "--seed", "7", "--json", db=db)
    assert own.json()["sweep_id"] != alices_sweep["sweep"] and own.json()["added"] == 2
    assert own.json()["experiment_id"] == copy
