"""The embedded store's files, read without its query engine (store/file_reads.py), answer
`sweep status` and the conversation listing exactly as the opened store does: counts, calls,
failures, workers, spend, favourites first, pages, totals and the note on another tool's
documents; changes made since the last answer are caught up first; a store that is not ready
(never opened, a migration pending) and a sweep that is not there are left to the store."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from bson import ObjectId

from simulator.services import conversation_listing as listing
from simulator.services import sweep_status
from simulator.store import file_reads
from simulator.store.database import open_database
from simulator.store.embedded import table_of
from simulator.store.file_reads import FileListingStore, FileReader, NotReadHere
from simulator.store.migrations import META_ID
from simulator.store.store import open_store

T0 = datetime(2026, 1, 1)
STATUSES = ("pending", "running", "done", "failed", "interrupted")


def conversation(i: int, **fields) -> dict:
    status = STATUSES[i % len(STATUSES)]
    return {
        "_id": f"conv_{i:03d}",
        "key": f"k{i}",
        "schema_version": 1,
        "sweep_id": "sweep_1",
        "experiment_id": f"exp_{i % 2}",
        "owner": ("alice", "bob")[i % 3 == 0],
        "order": (i * 7) % 40,
        "status": status,
        "cell_label": f"cell {i % 4}",
        "error": "boom" if status == "failed" else None,
        "created_at": T0 + timedelta(seconds=i // 2),
        "lease_owner": f"worker-{i % 2}" if status == "running" else None,
        "lease_expires_ms": 0,
        "counters": {"calls": i, "tokens_out": 10 * i},
        **fields,
    }


@pytest.fixture
def stored(tmp_path):
    """A store with a sweep of 40 conversations in every status, favourites, spend, and one
    conversation and one experiment of another tool; its folder and database name."""
    folder, name = tmp_path / "db 50%", "files"  # characters a file: URI must escape
    store = open_store(open_database(str(folder), name))
    store.db.sweeps.insert_one(
        {"_id": "sweep_1", "schema_version": 1, "name": "grid", "experiment_id": "exp_0",
         "owner": "alice", "created_at": T0,
         "spend": {"calls": 7, "tokens_in": 70, "tokens_out": 35, "cost": 0.25}}
    )  # fmt: skip
    store.sweeps.insert_conversations([conversation(i) for i in range(40)])
    store.db.conversations.insert_one({"_id": ObjectId(), "title": "the other tool's"})
    store.db.experiments.insert_one({"_id": ObjectId(), "name": "the other tool's"})
    for target in ("conv_003", "conv_030", "conv_017"):
        store.users.set_favourite("alice", listing.FAVOURITE_KIND, target, True)
    store.users.set_favourite("bob", listing.FAVOURITE_KIND, "conv_005", True)
    yield store, folder, name
    store.close()


class Opened:
    """A command's way in (the CLI's AppContext) with either the files or the store."""

    def __init__(self, store, reader):
        self.store, self.reader = store, reader

    def file_reader(self):
        return self.reader


def ready_reader(folder, name) -> FileReader:
    reader = FileReader(folder, name)
    assert reader.ready()
    return reader


def listings(where) -> list:
    answers = []
    for user, experiment_id, mine, limit in [
        ("alice", None, False, 50),
        ("alice", None, False, 5),
        ("alice", "exp_1", False, 4),
        ("bob", None, True, 3),
        ("bob", "exp_0", True, None),
        ("carol", None, False, 2),
    ]:
        page, note = listing.page_and_note(where, user, experiment_id, mine, limit)
        answers.append(([(d["_id"], d["favourite"]) for d in page.docs], page.total, note))
        answers.append(page.docs)
    return answers


def test_the_files_answer_status_and_listings_as_the_store(stored):
    store, folder, name = stored
    reader = ready_reader(folder, name)
    from_files = file_reads.sweep_status(reader, "sweep_1")
    assert from_files == sweep_status.status(store, "sweep_1")
    assert from_files["failed"] and from_files["workers"] == ["worker-0", "worker-1"]
    assert from_files["spend"]["cost"] == 0.25
    assert sweep_status.status_of(Opened(store, reader), "sweep_1") == from_files

    files = listings(Opened(store, reader))
    assert files == listings(Opened(store, None))
    assert files[0][0][:3] == [("conv_030", True), ("conv_017", True), ("conv_003", True)]
    assert "1 experiment and 1 conversation" in files[0][2]
    reader.close()


def test_changes_since_the_last_answer_are_caught_up_first(stored):
    store, folder, name = stored
    reader = ready_reader(folder, name)
    before = file_reads.sweep_status(reader, "sweep_1")
    # another process's writes, through the engine: the rows learn of them at the next answer
    store.db.conversations.update_many(
        {"sweep_id": "sweep_1", "status": "pending"}, {"$set": {"status": "done"}}
    )
    store.db.conversations.delete_one({"_id": "conv_030"})
    after = file_reads.sweep_status(reader, "sweep_1")
    assert after["counts"]["pending"] == 0 and after != before
    assert after == sweep_status.status(store, "sweep_1")
    assert listings(Opened(store, reader)) == listings(Opened(store, None))
    reader.close()


def test_what_the_files_do_not_answer_is_left_to_the_store(stored, tmp_path):
    store, folder, name = stored
    reader = ready_reader(folder, name)
    with pytest.raises(NotReadHere):  # the store raises its NotFound, with the fix
        file_reads.sweep_status(reader, "sweep_nope")
    with pytest.raises(NotReadHere):
        FileListingStore(reader).conversations.page(only={5}, limit=None)  # an int id
    reader.close()

    never_opened = FileReader(tmp_path / "elsewhere", "files")
    assert not never_opened.ready()
    assert not (tmp_path / "elsewhere").exists()  # reading creates nothing

    store.db.meta.update_one({"_id": META_ID}, {"$set": {"version": 1}})  # a migration pending
    assert not FileReader(folder, name).ready()


def test_a_store_without_its_rows_is_left_to_the_store(stored):
    store, folder, name = stored
    connection = table_of(store.db.conversations)._connection
    with connection:
        connection.execute("DELETE FROM sim_info WHERE name = 'version'")  # as before the rows
    assert not FileReader(folder, name).ready()
