"""Migration 003 on a store written before it: sparse `key` indexes, the reference tool's
documents restored, and auto/manual conversations that keep the repeats they ran with."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest
from bson import ObjectId
from pymongo.errors import DuplicateKeyError

from simulator.store.database import open_database
from simulator.store.migrations import current_version, migrate
from simulator.store.store import open_store
from simulator.testing.reference_fixture import (
    ReferenceDatabase,
    llm_doc,
    prison_sections,
    reference_hashes,
    role_doc,
)


def _as_version_2(db) -> None:
    """What a store left by the previous release looks like: plain unique `key` indexes."""
    for collection in (db.conversations, db.sweeps):
        collection.drop_index("key_1")
        collection.create_index("key", unique=True)
    db.meta.update_one({"_id": "schema"}, {"$set": {"version": 2}}, upsert=True)


def _reference_conversation() -> dict:
    return {"_id": ObjectId(), "n_messages": 4, "agent_combination": [["guard", 1]]}


@pytest.fixture
def old_store(store_uri):
    db_name = f"t_{uuid.uuid4().hex[:10]}"
    store = open_store(open_database(store_uri, db_name))
    _as_version_2(store.db)
    store.close()
    return store_uri, db_name


def test_plain_key_indexes_become_sparse(old_store):
    uri, db_name = old_store
    db = open_database(uri, db_name).db
    db.conversations.insert_one(_reference_conversation())  # one missing `key` fits a plain index

    store = open_store(open_database(uri, db_name))
    try:
        assert current_version(store.db) == 3
        store.db.conversations.insert_one(_reference_conversation())  # a second one too, now
        store.db.sweeps.insert_many([{"_id": ObjectId()}, {"_id": ObjectId()}])
        store.db.conversations.insert_one({"_id": "conv_a", "key": "k", "schema_version": 1})
        with pytest.raises(DuplicateKeyError):  # still unique among this tool's documents
            store.db.conversations.insert_one({"_id": "conv_b", "key": "k", "schema_version": 1})
        store.db.meta.update_one({"_id": "schema"}, {"$set": {"version": 2}})
        assert migrate(store.db) == [3]  # a second process opening the same old store
        store.db.conversations.insert_one(_reference_conversation())
    finally:
        store.close()


def test_reference_documents_stamped_by_the_old_001_are_restored(old_store):
    """The previous release opened a database holding one reference conversation (two would
    have collided in its `key` index) and stamped `schema_version` into all of it."""
    uri, db_name = old_store
    db = open_database(uri, db_name).db
    reference = ReferenceDatabase(db)
    exp_id = reference.add_experiment(
        creator="alice",
        starting_message="Start the experiment",
        llms=[llm_doc("llama3")],
        roles=[role_doc("guard", prison_sections("guard")), role_doc("prisoner", [])],
        shared_sections=[],
        summarizer_sections=[],
        creation_date=datetime(2024, 5, 2, 9, 30, 15, 250000),
    )
    reference.add_conversation(
        exp_id,
        llm=llm_doc("llama3"),
        agent_combination=[("guard", 1), ("prisoner", 1)],
        n_messages=6,
        creation_date=datetime(2024, 5, 2, 10, 0, 0),
    )
    before = reference_hashes(db)
    for name in ("experiments", "conversations", "messages"):  # what the broad 001 did
        db[name].update_many(
            {"schema_version": {"$exists": False}}, {"$set": {"schema_version": 1}}
        )
    assert reference_hashes(db) != before

    store = open_store(open_database(uri, db_name))
    try:
        assert reference_hashes(store.db) == before
        assert store.foreign_counts() == {"experiments": 1, "conversations": 1, "messages": 6}
    finally:
        store.close()


def test_auto_and_manual_conversations_keep_the_repeats_they_ran_with(old_store):
    uri, db_name = old_store
    db = open_database(uri, db_name).db
    docs = {
        "conv_auto": {"speaker_method": "auto"},
        "conv_manual": {"speaker_method": "manual"},
        "conv_round": {"speaker_method": "round_robin"},
        "conv_new": {
            "speaker_method": "auto",
            "allow_repeat_speaker": False,
            "agents_know_their_names": True,
        },
    }
    db.conversations.insert_many(
        [{"_id": cid, "key": cid, "schema_version": 1, "spec": spec} for cid, spec in docs.items()]
    )
    foreign = {"_id": ObjectId(), "speaker_selection_method": "auto", "spec": {}}
    db.conversations.insert_one(dict(foreign))

    assert migrate(db) == [3]
    spec = {d["_id"]: d["spec"] for d in db.conversations.find({"schema_version": 1})}
    assert spec["conv_auto"]["allow_repeat_speaker"] is True
    assert spec["conv_manual"]["allow_repeat_speaker"] is True
    assert "allow_repeat_speaker" not in spec["conv_round"]
    assert spec["conv_new"]["allow_repeat_speaker"] is False  # written by the new release
    # their prompts had no "Your name is …" line: a resume keeps it that way
    for old in ("conv_auto", "conv_manual", "conv_round"):
        assert spec[old]["agents_know_their_names"] is False
    assert spec["conv_new"]["agents_know_their_names"] is True
    assert db.conversations.find_one({"_id": foreign["_id"]}) == foreign
