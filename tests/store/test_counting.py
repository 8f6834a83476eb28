"""Counting goes the fast way on each store and gives the same numbers on all of them; this
tool's mark (`schema_version`) is indexed on servers only, and foreign documents stay as they
were."""

from __future__ import annotations

from bson import ObjectId

from simulator.store.counting import count, count_by, is_server_collection
from simulator.store.foreign import NOT_OURS, foreign_counts, ours


def seed(store) -> None:
    db = store.db
    db.conversations.insert_many(
        [
            {"_id": f"c{i}", "schema_version": 1, "sweep_id": "s1", "status": status}
            for i, status in enumerate(["done", "done", "failed", "pending", "done"])
        ]
    )
    db.conversations.insert_many([{"_id": ObjectId(), "experiment_id": "ref"} for _ in range(3)])


def test_counts_agree_on_every_store(store):
    seed(store)
    col = store.db.conversations
    assert count(col, ours()) == 5
    assert count(col, NOT_OURS) == 3
    assert count(col, ours({"status": "done"})) == 3
    assert count(col, ours({"status": "nothing"})) == 0
    assert count_by(col, ours({"sweep_id": "s1"}), "status") == {
        "done": 3,
        "failed": 1,
        "pending": 1,
    }
    assert foreign_counts(store.db)["conversations"] == 3
    assert store.sweeps.status_totals("s1")["done"]["n"] == 3


def test_the_mark_is_indexed_on_servers_only_and_foreign_documents_are_untouched(store):
    seed(store)
    before = list(store.db.conversations.find(NOT_OURS))
    store.conversations.ensure_indexes()
    store.messages.ensure_indexes()
    store.experiments.ensure_indexes()
    for name in ("conversations", "messages", "experiments"):
        col = store.db[name]
        keys = [info["key"] for info in col.index_information().values()]
        assert ([("schema_version", 1)] in keys) == is_server_collection(col)
    assert list(store.db.conversations.find(NOT_OURS)) == before
