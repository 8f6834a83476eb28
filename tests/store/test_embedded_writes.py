"""The embedded store's direct group writes (store/embedded_writes.py) store what mongomock
would: the same bytes, the same duplicate-`_id` outcomes, the query index kept in step, nothing
of a group stored when one of its documents fails; and they refuse what only mongomock can
check (unique indexes, filters beyond an `_id`)."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest
from pymongo.errors import DuplicateKeyError

from simulator.store.embedded import table_of
from simulator.store.embedded_writes import direct_table, set_fields_one
from simulator.store.store import open_store_uri


@pytest.fixture
def lite(tmp_path):
    store = open_store_uri(str(tmp_path / "db"))
    yield store
    store.close()


def _raw(collection, doc_id) -> bytes:
    table = table_of(collection)
    query = f"SELECT doc FROM {table._table_name} WHERE _id = ?"
    return table._connection.execute(query, (table.encode_key(doc_id),)).fetchone()[0]


def _call(i: int) -> dict:
    return {
        "_id": f"conv-c{i:06d}",
        "conversation_id": "conv",
        "seq": i,
        "created_at": datetime(2026, 11, 23, 12, 0, 0, 123456),  # microseconds: BSON keeps ms
        "params": {"temperature": 0.7, "stop": ["\n"]},
        "response": None,
    }


def test_inserted_bytes_equal_what_mongomocks_insert_one_stores(lite):
    calls = lite.db.calls
    calls.insert_one(_call(1))
    assert direct_table(calls).insert([_call(2)]) == [True]
    first, second = _raw(calls, "conv-c000001"), _raw(calls, "conv-c000002")
    assert second == first.replace(b"conv-c000001", b"conv-c000002").replace(
        b"\x10seq\x00\x01", b"\x10seq\x00\x02"
    )
    assert calls.find_one({"_id": "conv-c000002"})["created_at"] == datetime(
        2026, 11, 23, 12, 0, 0, 123000
    )


def test_a_taken_id_is_false_and_leaves_the_stored_document(lite):
    calls = lite.db.calls
    calls.insert_one({**_call(1), "response": "first"})
    batch = [{**_call(1), "response": "second"}, _call(2), {**_call(2), "response": "again"}]
    assert direct_table(calls).insert(batch) == [False, True, False]
    assert calls.find_one({"_id": "conv-c000001"})["response"] == "first"
    assert calls.find_one({"_id": "conv-c000002"})["response"] is None


def test_a_document_that_cannot_be_stored_fails_its_whole_group(lite):
    calls = lite.db.calls
    batch = [_call(1), {**_call(2), "response": object()}, _call(3)]
    with pytest.raises(Exception):  # noqa: B017 - bson's own InvalidDocument
        direct_table(calls).insert(batch)
    assert calls.count_documents({}) == 0
    with pytest.raises(ValueError, match=r"\$set"):
        direct_table(calls).insert([{"_id": "x", "$set": 1}])


def test_updates_set_top_level_fields_by_id_and_skip_a_missing_row(lite):
    calls = lite.db.calls
    calls.insert_many([_call(1), _call(2)])
    updates = [({"_id": "conv-c000001"}, {"state": "done", "response": "hi"})]
    updates.append(({"_id": "nope"}, {"state": "x"}))
    assert direct_table(calls).update(updates) == [True, True]
    stored = calls.find_one({"_id": "conv-c000001"})
    assert (stored["state"], stored["response"], stored["seq"]) == ("done", "hi", 1)
    assert stored["params"] == {"temperature": 0.7, "stop": ["\n"]}
    assert calls.find_one({"_id": "nope"}) is None
    assert calls.find_one({"_id": "conv-c000002"})["response"] is None


def test_a_query_index_built_before_the_writes_sees_them(lite):
    calls = lite.db.calls
    calls.insert_one(_call(1))
    assert calls.count_documents({"conversation_id": "conv"}) == 1  # builds the query index
    assert calls._store._query_index is not None
    direct = direct_table(calls)
    direct.insert([_call(2), {**_call(3), "conversation_id": "other"}])
    direct.update([({"_id": "conv-c000001"}, {"conversation_id": "moved"})])
    assert [d["seq"] for d in calls.find({"conversation_id": "conv"})] == [2]
    assert [d["seq"] for d in calls.find({"conversation_id": "moved"})] == [1]


def test_what_only_mongomock_can_check_keeps_its_path(lite):
    conversations, calls = direct_table(lite.db.conversations), direct_table(lite.db.calls)
    assert conversations.unique_fields == {"key"} and not conversations.can_insert()
    assert calls.can_insert() and calls.can_update({"_id": "a"}, {"state": "done"})
    assert conversations.can_update({"_id": "a", "lease_owner": "w1"}, {"status": "done"})
    assert not conversations.can_update({"_id": "a"}, {"key": "k"})  # a unique field
    assert not calls.can_update({"_id": "a", "lease.owner": "w"}, {"state": "done"})
    assert not calls.can_update({"_id": {"$in": ["a"]}}, {"state": "done"})
    assert not calls.can_update({"_id": "a", "tags": ["x"]}, {"state": "done"})
    assert not calls.can_update({"_id": "a"}, {"counters.calls": 1})
    assert not calls.can_update({"_id": "a"}, {"$inc": {"n": 1}})
    mock = open_store_uri("mongomock://")
    try:
        assert direct_table(mock.db.calls) is None
    finally:
        mock.close()


def test_a_guarded_update_writes_only_while_the_guard_holds(lite):
    """A worker that lost its lease (another owner now) must not overwrite the new owner's
    writes; equality as MongoDB has it (an array holds the value; True is not 1)."""
    conversations = lite.db.conversations
    conversations.insert_one({"_id": "c1", "lease_owner": "w2", "status": "running", "n": 1})
    set_fields_one(conversations, {"_id": "c1", "lease_owner": "w1"}, {"status": "failed"})
    assert conversations.find_one({"_id": "c1"})["status"] == "running"
    set_fields_one(conversations, {"_id": "c1", "lease_owner": "w2"}, {"status": "done"})
    assert conversations.find_one({"_id": "c1"})["status"] == "done"
    set_fields_one(conversations, {"_id": "c1", "n": True}, {"status": "x"})
    assert conversations.find_one({"_id": "c1"})["status"] == "done"
    conversations.insert_one({"_id": "c2", "tags": ["a", "b"]})
    set_fields_one(conversations, {"_id": "c2", "tags": "b"}, {"status": "tagged"})
    assert conversations.find_one({"_id": "c2"})["status"] == "tagged"
    set_fields_one(conversations, {"_id": "c2"}, {"key": "k1"})  # unique: through mongomock
    conversations.insert_one({"_id": "c3"})
    with pytest.raises(DuplicateKeyError):
        set_fields_one(conversations, {"_id": "c3"}, {"key": "k1"})


def test_group_commit_writes_a_flush_in_one_transaction_per_group(lite):
    """2 groups (ledger rows, their outcomes) of 50 calls: 2 commits, not 100."""
    commits = []
    connection = table_of(lite.db.calls)._connection
    connection.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)

    async def go() -> None:
        writes = lite.group_commit()
        rows = [writes.insert("calls", _call(i)) for i in range(50)]
        outcomes = [
            writes.update("calls", {"_id": _call(i)["_id"]}, {"state": "done"}) for i in range(50)
        ]
        assert all(await asyncio.gather(*rows, *outcomes))

    asyncio.run(go())
    connection.set_trace_callback(None)
    assert len(commits) == 2
    assert lite.db.calls.count_documents({"state": "done"}) == 50


def test_raise_to_moves_a_field_forward_only_and_only_on_our_documents(lite):
    memories = lite.db.memories
    memories.insert_many(
        [
            {"_id": "a", "schema_version": 1, "last_accessed": 10, "agent": 0},
            {"_id": "b", "schema_version": 1, "last_accessed": 30, "agent": 0},
            {"_id": "c", "last_accessed": 5, "agent": 0},  # another tool's: never written
        ]
    )
    assert memories.count_documents({"agent": 0}) == 3  # builds the query index
    direct = direct_table(memories)
    assert direct.raise_to(["a", "b", "c", "missing", "a"], "last_accessed", 20) == 1
    stored = {d["_id"]: d["last_accessed"] for d in memories.find({})}
    assert stored == {"a": 20, "b": 30, "c": 5}
    assert [d["_id"] for d in memories.find({"last_accessed": 20})] == ["a"]  # index in step
    with pytest.raises(ValueError):
        direct_table(lite.db.conversations).raise_to(["x"], "key", 1)
