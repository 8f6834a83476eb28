"""The memories collection through the real stores (mongomock, litemongo in a temp dir, and
nx-27017 over TCP: the `store` fixture runs each test on all three)."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.memory.domain.records import new_record
from simulator.memory.domain.stream import MemoryStream
from simulator.memory.domain.vectors import hash_vector, hash_vectors
from simulator.store.cascade import count_conversation, delete_conversation
from simulator.store.repositories.memories import SCHEMA_VERSION


def _records(run: str, agent: int, n: int, start: int = 0):
    return [
        new_record(run, agent, seq, "observation", f"{agent} saw {seq}", seq * 5, seq % 10 + 1)
        for seq in range(start, start + n)
    ]


def test_records_and_vectors_come_back_as_stored(store):
    records = _records("conv_m1", 0, 5)
    thought = new_record("conv_m1", 0, 5, "thought", "a pattern", 30, 8, evidence=records[:2])
    records.append(thought)
    vectors = hash_vectors([r.text for r in records], 384)
    assert store.memories.insert(records, vectors, "mock:384") == 6
    loaded = store.memories.load("conv_m1", 0)
    assert loaded.records == records
    assert loaded.embedders == {"mock:384"}
    assert np.array_equal(loaded.matrix(), vectors)  # float32 bytes: exact
    doc = store.db.memories.find_one({"_id": thought.id})
    assert doc["schema_version"] == SCHEMA_VERSION and doc["conversation_id"] == "conv_m1"
    assert (doc["embedding_dim"], doc["depth"], doc["evidence"]) == (384, 1, thought.evidence)


def test_insert_is_idempotent_so_a_resumed_run_writes_nothing_twice(store):
    records = _records("conv_m2", 1, 4)
    assert store.memories.insert(records[:2]) == 2
    changed = records[1].model_copy(update={"text": "rewritten"})
    assert store.memories.insert([records[0], changed, *records[2:], records[3]]) == 2
    assert store.memories.count("conv_m2") == 4
    assert store.memories.stream("conv_m2", 1)[1].text == records[1].text  # first write stands
    assert store.memories.insert([]) == 0


def test_an_agents_stream_is_its_own_in_stream_order(store):
    mine, theirs = _records("conv_m3", 0, 12), _records("conv_m3", 1, 3)
    other_run = _records("conv_m3x", 0, 2)
    store.memories.insert(list(reversed(mine[6:])) + theirs + other_run)
    store.memories.insert(mine[:6])
    assert [r.seq for r in store.memories.stream("conv_m3", 0)] == list(range(12))
    assert [r.text for r in store.memories.stream("conv_m3", 1)] == [r.text for r in theirs]
    assert store.memories.agents("conv_m3") == {0: 12, 1: 3}
    assert store.memories.stream("conv_m3", 7) == []


def test_touch_moves_last_accessed_forward_only(store):
    records = _records("conv_m4", 0, 4)
    store.memories.insert(records)
    store.memories.touch([records[0].id, records[2].id, records[2].id], now=100)
    store.memories.touch([records[2].id], now=50)  # an older access changes nothing
    found = store.memories.stream("conv_m4", 0)
    assert [r.last_accessed for r in found] == [100, 5, 100, 15]


def test_vectors_can_be_stored_after_the_record(store):
    records = _records("conv_m5", 0, 3)
    store.memories.insert(records)
    loaded = store.memories.load("conv_m5", 0)
    assert loaded.vectors == [None, None, None] and loaded.embedders == set()
    with pytest.raises(ValueError, match="no stored vector"):
        loaded.matrix()
    store.memories.set_embeddings([r.id for r in records], hash_vectors(["a", "b", "c"], 8), "x")
    again = store.memories.load("conv_m5", 0)
    assert np.array_equal(again.matrix(), hash_vectors(["a", "b", "c"], 8))
    assert again.embedders == {"x"}


def test_a_resumed_stream_retrieves_what_the_live_one_did(store):
    live = MemoryStream("conv_m6", 2)
    for seq in range(40):
        record = live.make("observation", f"event {seq}", seq * 10, seq % 10 + 1)
        live.add(record, hash_vector(record.text, 16))
    store.memories.insert(live.records, hash_vectors([r.text for r in live.records], 16), "mock")
    found = live.retrieve(hash_vector("event 3", 16), now=500, k=5)
    store.memories.touch([r.id for r in found], now=500)
    stored = store.memories.load("conv_m6", 2)
    resumed = MemoryStream.from_records(stored.records, stored.matrix())
    query = hash_vector("event 30", 16)
    assert [r.id for r in resumed.retrieve(query, 600)] == [r.id for r in live.retrieve(query, 600)]


def test_deleting_a_conversation_deletes_its_memories(store):
    store.memories.insert(_records("conv_m7", 0, 3) + _records("conv_m8", 0, 2))
    assert count_conversation(store.db, "conv_m7").memories == 3
    assert "3 memories" in count_conversation(store.db, "conv_m7").phrase()
    delete_conversation(store.db, "conv_m7")
    assert store.memories.count("conv_m7") == 0 and store.memories.count("conv_m8") == 2
