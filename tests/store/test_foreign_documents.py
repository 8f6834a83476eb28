"""A database shared with the reference tool: this tool opens, lists, runs and deletes beside
its documents without changing a byte of them, and says how many it left out."""

from __future__ import annotations

import uuid

import pytest
from bson import ObjectId

from simulator.store.database import open_database
from simulator.store.migrations import current_version, migrate
from simulator.store.store import open_store
from simulator.testing.reference_fixture import (
    build_prison_database,
    llm_doc,
    reference_hashes,
)


@pytest.fixture
def shared(store_uri):
    """A database holding the reference tool's prison study (4 of its conversations), opened
    by this tool afterwards; yields (uri, db name, the reference ids, their hashes)."""
    db_name = f"t_{uuid.uuid4().hex[:10]}"
    raw = open_database(store_uri, db_name)
    ids = build_prison_database(raw.db)
    before = reference_hashes(raw.db)
    raw.close()
    return store_uri, db_name, ids, before


def test_opening_leaves_the_reference_documents_alone(shared):
    uri, db_name, _ids, before = shared
    store = open_store(open_database(uri, db_name))  # failed: unique `key` index, 4 nulls
    try:
        assert reference_hashes(store.db) == before  # failed: 001 stamped schema_version
        # the reference tool goes on writing conversations (no `key`) into the same database
        for _ in range(2):
            store.db.conversations.insert_one(
                {"_id": ObjectId(), "n_messages": 4, "llm": llm_doc("llama3"), "messages_ids": []}
            )
        store.close()
        store = open_store(open_database(uri, db_name))  # and this tool opens it again
        assert store.foreign_counts() == {"experiments": 2, "conversations": 6, "messages": 56}
    finally:
        store.close()


def test_migration_001_stamps_only_this_tools_documents(store_uri):
    db = open_database(store_uri, f"t_{uuid.uuid4().hex[:10]}").db
    build_prison_database(db)
    before = reference_hashes(db)
    db.experiments.insert_one({"_id": "exp_0a1b2c", "name": "written before version 1"})
    db.users.insert_one({"_id": "alice"})
    db.messages.insert_one({"_id": "conv_0a1b2c3d-d001-m00000", "text": "hi"})

    assert migrate(db) == [1, 2, 3] and current_version(db) == 3
    assert db.experiments.find_one({"_id": "exp_0a1b2c"})["schema_version"] == 1
    assert db.users.find_one({"_id": "alice"})["schema_version"] == 1
    assert db.messages.find_one({"_id": "conv_0a1b2c3d-d001-m00000"})["schema_version"] == 1
    assert reference_hashes(db) == before


def test_listing_skips_foreign_documents_and_says_how_to_import_them(shared, run_cli, prison_path):
    uri, db_name, ids, before = shared
    env = {"SIM_DB": uri, "SIM_DB_NAME": db_name, "SIM_USER": "carol"}
    created = run_cli(["experiment", "create", str(prison_path), "--json"], env=env)
    assert created.code == 0, created.err
    exp_id = created.json()["id"]

    listed = run_cli(["experiment", "list", "--json"], env=env)
    assert listed.code == 0, listed.err  # crashed: KeyError 'created_at'
    assert [e["id"] for e in listed.json()] == [exp_id]
    note = "2 experiments and 4 conversations from the reference LLM Interaction Simulator"
    assert note in listed.err and "llm-sim import reference --from" in listed.err
    assert f"--db-name {db_name}" in listed.err

    human = run_cli(["experiment", "list"], env=env)
    assert human.code == 0 and exp_id in human.out and note in human.out
    conversations = run_cli(["conversation", "list"], env=env)
    assert conversations.code == 0, conversations.err  # crashed: KeyError 'spec'
    assert "No conversations yet" in conversations.out and note in conversations.out
    assert run_cli(["conversation", "list", "--json"], env=env).json() == []

    for kind, key in (("experiment", "alice"), ("conversation", "lesson")):
        shown = run_cli([kind, "show", str(ids[key])], env=env)
        assert shown.code == 2, shown.out
        assert "written by another tool" in shown.err and "llm-sim import reference" in shown.err
    for command in (["measures", str(ids["one_day"])], ["measures", str(ids["alice"])]):
        refused = run_cli(command, env=env)
        assert refused.code == 2 and "written by another tool" in refused.err, refused.err
    assert reference_hashes(open_database(uri, db_name).db) == before


def test_running_and_deleting_beside_them_changes_none_of_them(shared, run_cli, prison_path):
    uri, db_name, ids, before = shared
    env = {"SIM_DB": uri, "SIM_DB_NAME": db_name, "SIM_USER": "carol"}
    exp_id = run_cli(["experiment", "create", str(prison_path), "--json"], env=env).json()["id"]
    run = run_cli(
        ["run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "4", "--days", "2",
         "--llm", "mock:a", "--json"],
        env=env,
    )  # fmt: skip
    assert run.code == 0, run.err
    assert run_cli(["conversation", "list", "--json"], env=env).json()[0]["status"] == "done"
    deleted = run_cli(["experiment", "delete", exp_id, "--yes"], env=env)
    assert deleted.code == 0, deleted.err

    db = open_database(uri, db_name).db
    assert reference_hashes(db) == before
    assert db.experiments.count_documents({}) == 2 and db.conversations.count_documents({}) == 4
    refused = run_cli(["experiment", "delete", str(ids["alice"]), "--yes"], env=env)
    assert refused.code == 2 and "written by another tool" in refused.err
    assert reference_hashes(db) == before
