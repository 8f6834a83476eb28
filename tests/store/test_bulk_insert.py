"""Inserting a sweep's conversations in bulk (store/bulk_insert.py): a taken random `_id` is
replaced rather than the conversation dropped, on every store; on the embedded store the rows
are the bytes litemongo itself writes, and a failure part-way stores none of them."""

from __future__ import annotations

import datetime as dt

import pytest
from bson.errors import InvalidDocument

from simulator.domain.clock import now
from simulator.store import bulk_insert
from simulator.store.bulk_embedded import STAGING
from simulator.store.bulk_insert import insert_new
from simulator.store.database import open_database
from simulator.store.embedded import table_of
from simulator.store.store import open_store


def conversation(conv_id: str, key: str, **extra) -> dict:
    return {"_id": conv_id, "key": key, "schema_version": 1, "sweep_id": "s", **extra}


def test_a_taken_id_gets_a_new_one_and_a_stored_key_is_skipped(store):
    """conv ids have 32 random bits: a sweep of 100,000 holds a colliding pair more often than
    not. A collision used to drop the conversation silently; a stored key is still skipped."""
    convs = store.db.conversations
    assert store.sweeps.insert_conversations([conversation("conv_00000001", "k_1")]) == 1
    batch = [
        conversation("conv_00000001", "k_2"),  # its id is taken by k_1
        conversation("conv_00000003", "k_1"),  # stored already: skipped
        conversation("conv_00000004", "k_4"),
        conversation("conv_00000004", "k_5"),  # the same id twice in one call
    ]
    assert store.sweeps.insert_conversations(batch) == 3
    stored = {d["key"]: d["_id"] for d in convs.find({"sweep_id": "s"}, {"key": 1})}
    assert set(stored) == {"k_1", "k_2", "k_4", "k_5"}
    assert len(set(stored.values())) == 4
    assert stored["k_1"] == "conv_00000001" and stored["k_2"].startswith("conv_")
    # the usual queries of this process see the new rows (the embedded store's query index)
    assert convs.find_one({"key": "k_2"})["_id"] == stored["k_2"]
    assert convs.count_documents({"sweep_id": "s"}) == 4


def test_a_generator_is_consumed_a_batch_at_a_time(store, monkeypatch):
    """Each document is pulled from the generator only after every earlier batch was written
    (inserted on a server or mongomock, staged on the embedded store), so a generator of
    100,000 is never held as a list."""
    monkeypatch.setattr(bulk_insert, "BATCH", 3)
    convs = store.db.conversations
    table = table_of(convs)

    def written() -> int:
        if table is None:
            return convs.count_documents({"sweep_id": "s"})
        staged = f"SELECT count(*) FROM {STAGING}.rows"  # committed all at once at the end
        return table._connection.execute(staged).fetchone()[0]

    seen_at_pull: list[int] = []

    def docs():
        for i in range(10):
            seen_at_pull.append(written())
            yield conversation(f"conv_g{i:07d}", f"k_g{i}")

    assert store.sweeps.insert_conversations(docs()) == 10
    assert seen_at_pull == [0, 0, 0, 3, 3, 3, 6, 6, 6, 9]
    assert convs.count_documents({"sweep_id": "s"}) == 10


@pytest.fixture
def embedded(tmp_path):
    opened = open_store(open_database(str(tmp_path / "store"), "bulk"))
    yield opened
    opened.close()


def _rows(collection) -> list[tuple]:
    table = table_of(collection)
    query = f"SELECT _id, doc FROM {table._table_name} ORDER BY ROWID"
    return list(table._connection.execute(query))


def test_embedded_rows_are_the_bytes_litemongo_itself_writes(embedded):
    aware = dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    docs = [
        conversation(
            f"conv_b{i:07d}",
            f"k_b{i}",
            created_at=now(),
            precise=dt.datetime(2026, 1, 2, 3, 4, 5, 123456),
            aware=aware,
            spec={"role_llms": {"Guard": {"model": "m", "params": {"top_k": None}}}, "seed": i},
            agents=[{"name": "Guard_1"}],
            day_split=(10, 10),
            ratio=0.5,
            flag=True,
        )
        for i in range(30)
    ]
    db = embedded.db
    db.mirror.insert_many([dict(d) for d in docs])  # litemongo's own path
    added = insert_new(db.conversations, [dict(d) for d in docs], "key", lambda: "conv_x")
    assert added == 30
    assert _rows(db.conversations) == _rows(db.mirror)
    assert list(db.conversations.find({}, {"_id": 0})) == list(db.mirror.find({}, {"_id": 0}))


def test_embedded_failure_part_way_stores_none(embedded):
    docs = [conversation(f"conv_f{i:07d}", f"k_f{i}") for i in range(2500)]
    docs[1700]["bad"] = object()  # not encodable: fails after 1,700 were written
    with pytest.raises(InvalidDocument):
        embedded.sweeps.insert_conversations(docs)
    convs = embedded.db.conversations
    assert convs.count_documents({}) == 0
    assert _rows(convs) == []
    del docs[1700]["bad"]
    assert embedded.sweeps.insert_conversations(docs) == 2500  # nothing left half-open
    assert convs.count_documents({"sweep_id": "s"}) == 2500


def test_embedded_rows_another_process_stored_meanwhile_are_not_stored_twice(tmp_path, monkeypatch):
    """Between staging and the write lock another process stores one of the keys and takes
    one of the staged ids: the first is dropped, the second stored under a new id."""
    from simulator.store import bulk_embedded

    mine = open_store(open_database(str(tmp_path / "store"), "bulk"))
    other = open_store(open_database(str(tmp_path / "store"), "bulk"))
    stage = bulk_embedded._stage

    def stage_then_race(*args):
        stage(*args)
        other.db.conversations.insert_many(
            [conversation("conv_r0000001", "k_r1"), conversation("conv_r0000002", "k_theirs")]
        )

    monkeypatch.setattr(bulk_embedded, "_stage", stage_then_race)
    docs = [conversation(f"conv_r{i:07d}", f"k_r{i}") for i in range(1, 4)]
    try:
        assert mine.sweeps.insert_conversations(docs) == 2  # k_r1 was theirs
        stored = {d["key"]: d["_id"] for d in mine.db.conversations.find({}, {"key": 1})}
        assert stored["k_r1"] == "conv_r0000001" and stored["k_theirs"] == "conv_r0000002"
        assert stored["k_r3"] == "conv_r0000003"
        assert stored["k_r2"] not in ("conv_r0000001", "conv_r0000002", "conv_r0000003")
        (moved,) = mine.db.conversations.find({"key": "k_r2"})
        assert moved["_id"] == stored["k_r2"] and moved["sweep_id"] == "s"
        assert len(_rows(mine.db.conversations)) == 4
    finally:
        mine.close()
        other.close()
