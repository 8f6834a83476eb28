"""A sweep's bulk insert on the embedded store writes the conversations' rows and counts itself
(store/bulk_embedded.py stages them in id order beside the documents): they equal a full
recount of the documents after an insert into a store that holds rows already, after another
process stored some of the keys and ids between staging and the write lock, and after a
failure part-way (nothing staged survives)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from simulator.store import bulk_embedded
from simulator.store import conversation_rows as rows
from simulator.store.database import open_database
from simulator.store.embedded import table_of
from simulator.store.store import open_store


def conversation(conv_id: str, key: str, sweep: str = "s", **extra) -> dict:
    return {
        "_id": conv_id,
        "key": key,
        "schema_version": 1,
        "sweep_id": sweep,
        "status": "pending",
        "counters": {"calls": 2, "tokens_out": 5},
        **extra,
    }


@pytest.fixture
def embedded(tmp_path):
    opened = open_store(open_database(str(tmp_path / "store"), "bulk"))
    yield opened
    opened.close()


def counts(store) -> dict:
    connection = table_of(store.db.conversations)._connection
    query = "SELECT sweep_id, status, n, calls, tokens_out FROM sim_counts WHERE n > 0"
    return {(s, st): (n, c, t) for s, st, n, c, t in connection.execute(query)}


def test_rows_of_a_second_insert_join_those_stored(embedded):
    convs = embedded.sweeps
    first = [conversation(f"conv_a{i:07d}", f"k_a{i}", order=i) for i in range(0, 3000, 2)]
    second = [conversation(f"conv_a{i:07d}", f"k_a{i}", "t", order=i) for i in range(1, 3000, 2)]
    assert convs.insert_conversations(first) == 1500
    assert convs.insert_conversations(second + first[:10]) == 1500  # stored keys skipped
    assert rows.drift(table_of(embedded.db.conversations)) == []
    both = {("s", "pending"): (1500, 3000, 7500), ("t", "pending"): (1500, 3000, 7500)}
    assert counts(embedded) == both


def test_rows_stay_exact_when_another_process_wrote_meanwhile(tmp_path, monkeypatch):
    """Between staging and the write lock another process stores one of the keys and takes one
    of the staged ids: the rows of the dropped key are dropped with it, the moved id's row
    moves with it."""
    mine = open_store(open_database(str(tmp_path / "store"), "bulk"))
    other = open_store(open_database(str(tmp_path / "store"), "bulk"))
    stage = bulk_embedded._stage

    def stage_then_race(*args):
        stage(*args)
        other.db.conversations.insert_many(
            [conversation("conv_r0000001", "k_r1", "x"), conversation("conv_r0000002", "k_o")]
        )

    monkeypatch.setattr(bulk_embedded, "_stage", stage_then_race)
    docs = [conversation(f"conv_r{i:07d}", f"k_r{i}") for i in range(1, 4)]
    try:
        assert mine.sweeps.insert_conversations(docs) == 2
        table = table_of(mine.db.conversations)
        assert rows.drift(table) == []
        keys = dict(table._connection.execute("SELECT key, id FROM sim_rows"))
        assert set(keys) == {"k_r1", "k_o", "k_r2", "k_r3"}
        assert keys["k_r2"] not in (keys["k_r1"], keys["k_o"], keys["k_r3"])
        assert counts(mine) == {("x", "pending"): (1, 2, 5), ("s", "pending"): (3, 6, 15)}
    finally:
        mine.close()
        other.close()


def test_a_failed_insert_leaves_no_rows(embedded):
    docs = [conversation(f"conv_f{i:07d}", f"k_f{i}") for i in range(2500)]
    docs[2100]["bad"] = object()  # not encodable: fails after 2,100 were staged
    with pytest.raises(Exception, match="cannot encode"):
        embedded.sweeps.insert_conversations(docs)
    table = table_of(embedded.db.conversations)
    assert table._connection.execute("SELECT count(*) FROM sim_rows").fetchone() == (0,)
    assert counts(embedded) == {}
    del docs[2100]["bad"]
    assert embedded.sweeps.insert_conversations(docs) == 2500
    assert rows.drift(table) == []
    assert counts(embedded) == {("s", "pending"): (2500, 5000, 12500)}


HOLD_LOCK = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1])
connection.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
connection.commit()
"""


def test_a_claim_waits_for_a_bulk_write_that_holds_the_lock(embedded):
    """A sweep's bulk insert holds the conversations' write lock while it copies them all
    (seconds at 1,000,000); a worker's claim meanwhile waits for it instead of failing with
    `database is locked` after sqlite3's default 5 s."""
    embedded.sweeps.insert_conversations([conversation("conv_w0000001", "k_w1")])
    path = table_of(embedded.db.conversations)._connection.execute("PRAGMA database_list")
    (file,) = [row[2] for row in path if row[1] == "main"]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, file, "6"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        claimed = embedded.sweeps.claim("conv_w0000001", "worker-1", 60_000)
        assert claimed is not None and claimed["lease_owner"] == "worker-1"
    finally:
        holder.wait(timeout=60)
    assert holder.returncode == 0
