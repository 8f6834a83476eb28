"""The embedded store's files (store/file_store.py) answer what `experiment list|show`, `sweep
list` and `conversation show` ask exactly as the opened store's repositories do, ties in the
sort included (natural order, kept by an update); what they cannot answer the same way (an id
not found, another tool's document, a list where a text is matched, values of mixed types,
the first version's call ids) is left to the store."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from bson import ObjectId

from simulator.store.database import open_database
from simulator.store.file_reads import FileReader, NotReadHere
from simulator.store.file_store import FileStore
from simulator.store.store import open_store

T0 = datetime(2026, 1, 1)


def experiment(i: int, owner: str, created: datetime) -> dict:
    return {
        "_id": f"exp_{i:02d}",
        "schema_version": 1,
        "name": f"experiment {i}",
        "owner": owner,
        "created_at": created,
        "spec": {},
    }


@pytest.fixture
def stored(tmp_path):
    """Experiments and sweeps of two owners, several created at the same moment (their order
    is the store's natural order), one updated since; favourites; a conversation with messages
    and calls written out of order; another tool's experiment."""
    folder, name = tmp_path / "store", "files"
    store = open_store(open_database(str(folder), name))
    for i in range(8):
        created = T0 + timedelta(seconds=i // 3)  # three at each moment
        store.db.experiments.insert_one(experiment(i, ("alice", "bob")[i % 2], created))
        store.db.sweeps.insert_one(
            {"_id": f"sweep_{i}", "schema_version": 1, "experiment_id": f"exp_{i % 3:02d}",
             "owner": "alice", "created_at": created, "name": f"s{i}"}
        )  # fmt: skip
    store.db.experiments.update_one({"_id": "exp_00"}, {"$set": {"note": "changed"}})
    store.db.experiments.insert_one({"_id": ObjectId(), "name": "the other tool's"})
    store.users.set_favourite("alice", "experiment", "exp_03", True)
    conversation = {"_id": "conv_1", "schema_version": 1, "experiment_id": "exp_00", "key": "k1"}
    store.db.conversations.insert_one({**conversation, "owner": "alice", "created_at": T0})
    for seq in (2, 0, 1):
        base = {"schema_version": 1, "conversation_id": "conv_1", "seq": seq}
        store.db.messages.insert_one({**base, "_id": f"conv_1-d000-m{seq:05d}", "day": 0})
        store.db.calls.insert_one({**base, "_id": f"conv_1-c{seq:06d}", "prompt_hash": "h"})
    store.db.summaries.insert_one(
        {"_id": "conv_1-d000", "schema_version": 1, "conversation_id": "conv_1", "day": 0}
    )
    store.db.prompts.insert_one({"_id": "h", "messages_json": '[{"role": "user"}]'})
    reader = FileReader(folder, name)
    assert reader.ready()
    yield store, FileStore(reader)
    reader.close()
    store.close()


def test_the_files_answer_as_the_repositories(stored):
    store, files = stored
    for owner in (None, "alice", "bob"):
        assert files.experiments.list(owner) == store.experiments.list(owner)
    assert [d["_id"] for d in files.experiments.list()][:3] == ["exp_06", "exp_07", "exp_03"]
    for experiment_id in (None, "exp_00", "exp_01"):
        assert files.sweeps.list(experiment_id) == store.sweeps.list(experiment_id)
    ids = [f"sweep_{i}" for i in range(8)]
    assert files.sweeps.status_counts_of(ids) == store.sweeps.status_counts_of(ids)
    assert files.experiments.get("exp_00") == store.experiments.get("exp_00")
    assert files.sweeps.get("sweep_3") == store.sweeps.get("sweep_3")
    assert files.users.favourites("alice", "experiment") == {"exp_03"}
    assert files.users.is_favourite("alice", "experiment", "exp_03")
    assert not files.users.is_favourite("bob", "experiment", "exp_03")
    assert files.conversations.get("conv_1") == store.conversations.get("conv_1")
    messages = files.messages.for_conversation("conv_1")
    assert messages == store.messages.for_conversation("conv_1")
    assert [m["seq"] for m in messages] == [0, 1, 2]
    assert files.calls.for_conversation("conv_1") == store.calls.for_conversation("conv_1")
    assert files.calls.prompt("h") == store.calls.prompt("h") == [{"role": "user"}]
    assert files.calls.prompt("nothing") == store.calls.prompt("nothing") == []
    assert files.conversations.summaries("conv_1") == store.conversations.summaries("conv_1")
    assert files.foreign_counts(("experiments",)) == store.foreign_counts(("experiments",))


def test_what_the_files_cannot_answer_alike_is_left_to_the_store(stored):
    store, files = stored
    foreign = store.db.experiments.find_one({"schema_version": {"$exists": False}})
    for missing in ("exp_nothere", str(foreign["_id"])):
        with pytest.raises(NotReadHere):
            files.experiments.get(missing)
    with pytest.raises(NotReadHere):
        files.conversations.get("conv_nothere")
    store.db.experiments.insert_one({**experiment(20, "carol", T0), "created_at": "yesterday"})
    with pytest.raises(NotReadHere):  # mixed types sort by BSON's rules
        files.experiments.list()
    store.db.sweeps.insert_one({"_id": "sweep_x", "schema_version": 1, "experiment_id": ["a"]})
    with pytest.raises(NotReadHere):  # a list matches any of its items
        files.sweeps.list("a")
    store.db.calls.insert_one({"_id": "call_1", "schema_version": 1, "conversation_id": "c"})
    with pytest.raises(NotReadHere):  # the first version's ids say nothing of their conversation
        files.calls.for_conversation("conv_1")


def test_a_part_of_the_store_not_offered_on_the_files_is_left_to_the_store(stored):
    _, files = stored
    with pytest.raises(NotReadHere):  # a world's own question of the store
        files.scores.for_conversation("conv_1")
    with pytest.raises(NotReadHere):
        files.messages.count("conv_1")
    assert getattr(files.calls, "ledger", None) is None  # an attribute asked with a default
