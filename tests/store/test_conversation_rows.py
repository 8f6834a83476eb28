"""The embedded store's conversation rows and per-sweep counts (store/conversation_rows.py)
stay equal to a full recount of the documents whoever writes them: the repositories, mongomock's
own update paths, a raw SQL write, a delete cascade; an older store gets them built once on
first open; and the answers read from them equal those of the servers' query paths."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime, timedelta

import pytest
from bson import ObjectId

from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store import conversation_rows as rows
from simulator.store.cascade import delete_experiment
from simulator.store.embedded import table_of
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec

T0 = datetime(2026, 1, 1)


def table(store):
    return table_of(store.db.conversations)


def exact(store) -> None:
    assert rows.drift(table(store)) == []


def conversation(i: int, **fields) -> dict:
    return {
        "_id": f"conv_{i:03d}",
        "key": f"k{i}",
        "schema_version": 1,
        "sweep_id": "s1",
        "experiment_id": "e1",
        "owner": "alice",
        "order": i,
        "status": "pending",
        "created_at": T0 + timedelta(seconds=i // 2),
        "lease_owner": None,
        "lease_expires_ms": 0,
        "counters": {},
        **fields,
    }


def sweep_of(store, n: int, prison_path) -> str:
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=4,
        agents={"Guard": 1, "Prisoner": 1},
        llms=["openai:stub"],
        speaker_methods=["round_robin"],
        repetitions=n,
        seed=3,
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    return sweep["_id"]


def test_every_write_path_keeps_rows_and_counts_exact(embedded, prison_path):
    store = embedded
    sweep_id = sweep_of(store, 12, prison_path)  # the bulk insert
    exact(store)
    assert store.sweeps.status_counts(sweep_id) == {"pending": 12}
    worker = "host:1:w"
    ids = store.sweeps.claimable_ids(sweep_id)
    assert ids == store.sweeps.conversation_ids(sweep_id)  # waiting ones, in sweep order
    taken = [store.sweeps.claim(cid, worker, 60_000) for cid in ids[:5]]
    assert all(doc["status"] == "running" and doc["claims"] == 1 for doc in taken)
    assert store.sweeps.claim(ids[0], "other:2:w", 60_000) is None  # leased: not taken twice
    assert store.sweeps.heartbeat(ids[0], worker, 60_000)
    assert not store.sweeps.heartbeat(ids[0], "other:2:w", 60_000)
    counters = {"calls": 3, "tokens_out": 30}
    store.conversations.set_status(ids[0], "done", lease_owner=worker, also={"counters": counters})
    store.conversations.set_status(ids[1], "failed", "boom", worker, {"counters": counters})
    store.conversations.set_status(ids[2], "failed", "boom", worker)
    store.sweeps.release(ids[1], worker)
    exact(store)
    summary = store.sweeps.status_summary(sweep_id)
    assert summary["counts"] == {
        "pending": 7, "running": 2, "done": 1, "failed": 2, "interrupted": 0
    }  # fmt: skip
    assert (summary["calls"], summary["tokens_out"]) == (6, 60)
    assert summary["workers"] == [worker]
    assert [f["id"] for f in summary["failed"]] == [ids[1], ids[2]]
    assert store.sweeps.reset_failed(sweep_id) == 2
    exact(store)
    # mongomock's own paths (update_many, replace_one, delete_one) and a foreign document
    store.db.conversations.update_many({"_id": {"$in": ids[5:8]}}, {"$set": {"status": "done"}})
    doc = store.conversations.get(ids[8])
    store.db.conversations.replace_one({"_id": ids[8]}, {**doc, "status": "interrupted"})
    store.db.conversations.delete_one({"_id": ids[9]})
    store.db.conversations.insert_one({"_id": ObjectId(), "sweep_id": sweep_id, "status": "x"})
    exact(store)
    assert store.sweeps.status_counts(sweep_id) == {
        "pending": 4, "running": 2, "done": 4, "interrupted": 1, "x": 1
    }  # fmt: skip
    assert store.foreign_counts(("conversations",)) == {"conversations": 1}
    # the group commit's direct writes, then the delete cascade of the whole experiment
    asyncio.run(_group_committed(store, ids[10]))
    exact(store)
    assert store.sweeps.status_counts(sweep_id)["done"] == 5
    delete_experiment(store.db, store.conversations.get(ids[0])["experiment_id"])
    exact(store)
    assert store.sweeps.status_counts(sweep_id) == {"x": 1}


async def _group_committed(store, conversation_id: str) -> None:
    await store.group_commit().update("conversations", {"_id": conversation_id}, {"status": "done"})


def test_a_write_of_another_program_is_seen_at_the_next_answer(embedded):
    """An older version of this tool (or any SQLite client) writing the documents directly:
    the triggers mark the row, the next answer re-reads it."""
    store = embedded
    store.sweeps.insert_conversations([conversation(i) for i in range(4)])
    assert store.sweeps.status_counts("s1") == {"pending": 4}
    other = sqlite3.connect(table(store)._connection.execute("PRAGMA database_list").fetchone()[2])
    with other:
        other.execute("DELETE FROM documents WHERE _id = 's:conv_000'")
        raw = other.execute("SELECT doc FROM documents WHERE _id = 's:conv_001'").fetchone()[0]
    document = table(store)._decode_doc(raw)
    document["status"] = "done"
    with other:
        other.execute(
            "UPDATE documents SET doc = ? WHERE _id = 's:conv_001'",
            (table(store)._encode_doc(document),),
        )
    other.close()
    assert store.sweeps.status_counts("s1") == {"pending": 2, "done": 1}
    exact(store)


def test_a_store_written_before_the_rows_gets_them_once_on_open(tmp_path):
    uri = str(tmp_path / "db")
    store = open_store_uri(uri)
    store.sweeps.insert_conversations([conversation(i, status="done") for i in range(6)])
    store.db.conversations.insert_one({"_id": ObjectId(), "title": "the reference tool's"})
    connection = table(store)._connection
    with connection:  # as an older version left it: documents only
        for name in rows.TRIGGERS:
            connection.execute(f"DROP TRIGGER {name}")
        for name in ("sim_rows", "sim_counts", "sim_dirty", "sim_info"):
            connection.execute(f"DROP TABLE {name}")
    store.db.conversations.update_one({"_id": "conv_000"}, {"$set": {"status": "failed"}})
    store.close()
    reopened = open_store_uri(uri)
    try:
        assert not rows.ensure(table(reopened))  # built at open, once
        exact(reopened)
        assert reopened.sweeps.status_counts("s1") == {"done": 5, "failed": 1}
        assert reopened.foreign_counts(("conversations",)) == {"conversations": 1}
        assert reopened.conversations.count() == 6
    finally:
        reopened.close()


def test_listing_and_claims_answer_as_the_query_path(embedded, tmp_path):
    """Pages, counts, ids and claim order from the rows equal mongomock's query answers."""
    mock = open_store_uri(f"mongomock://{tmp_path.name}")
    docs = [
        conversation(
            i,
            experiment_id=f"e{i % 2}",
            owner=("alice", "bob")[i % 3 == 0],
            status=("pending", "interrupted", "done")[i % 3],
            order=(i * 7) % 30,
        )
        for i in range(30)
    ]
    for store in (embedded, mock):
        store.sweeps.insert_conversations([dict(d) for d in docs])

    def answers(store) -> tuple:
        repo = store.conversations
        return (
            [d["_id"] for d in repo.page(limit=7)],
            [d["_id"] for d in repo.page("e1", limit=5)],
            [d["_id"] for d in repo.page("e0", "bob", limit=50)],
            [d["_id"] for d in repo.page(limit=4, exclude={"conv_029", "conv_028"})],
            (repo.count(), repo.count("e1"), repo.count(owner="bob"), repo.count("e0", "bob")),
            repo.ids("e0"),
            store.sweeps.claimable_ids("s1", limit=6),
            store.sweeps.conversation_ids("s1"),
            [d["_id"] for d in store.sweeps.conversations("s1", "done")],
            store.sweeps.status_counts("s1"),
        )

    assert answers(embedded) == answers(mock)


@pytest.mark.parametrize("writes", [0, 3])
def test_a_claim_reads_candidates_from_the_index_not_the_documents(embedded, writes):
    """Claiming never builds litemongo's in-memory query index (every conversation's
    document, rebuilt whenever another process writes)."""
    store = embedded
    store.sweeps.insert_conversations([conversation(i) for i in range(20)])
    for i in range(writes):
        store.conversations.set_status(f"conv_{i:03d}", "done")
    doc = store.sweeps.claim_next("s1", "h:1:w", 1000)
    assert doc["_id"] == f"conv_{writes:03d}"
    store.sweeps.heartbeat(doc["_id"], "h:1:w", 1000)
    store.conversations.get(doc["_id"])
    store.sweeps.status_summary("s1") if store.sweeps.list() else None
    assert store.db.conversations._store._query_index is None


def test_an_answer_while_another_process_holds_the_write_lock_uses_the_last_rows(embedded):
    """A question never fails for want of the write lock (another process's bulk insert
    holding it): it answers from the rows as caught up last, and catches up afterwards."""
    store = embedded
    store.sweeps.insert_conversations([conversation(i) for i in range(3)])
    assert store.sweeps.status_counts("s1") == {"pending": 3}
    store.db.conversations.update_one({"_id": "conv_000"}, {"$set": {"status": "done"}})
    connection = table(store)._connection
    connection.execute("PRAGMA busy_timeout = 50")
    path = connection.execute("PRAGMA database_list").fetchone()[2]
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        assert store.sweeps.status_counts("s1") == {"pending": 3}  # not yet re-read
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.sweeps.status_counts("s1") == {"pending": 2, "done": 1}
    exact(store)
