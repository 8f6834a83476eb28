"""Records (ids, depth, validation) and one agent's stream: adding, retrieving, marking as
accessed, rebuilding from stored records."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from simulator.memory.domain.records import (
    MemoryRecord,
    agent_id_range,
    depth_of,
    memory_id,
    new_record,
)
from simulator.memory.domain.retrieval import PAPER, REFERENCE, RetrievalSettings, top_k
from simulator.memory.domain.stream import MemoryStream
from simulator.memory.domain.vectors import hash_vector, hash_vectors


def test_memory_ids_are_deterministic_and_sort_in_stream_order():
    assert memory_id("conv_ab12", 3, 17) == "conv_ab12-m00003-000017"
    ids = [memory_id("conv_ab12", 3, seq) for seq in (0, 9, 10, 99, 100, 123456)]
    assert ids == sorted(ids)
    low, high = agent_id_range("conv_ab12", 3)
    assert all(low <= i < high for i in ids)
    assert not low <= memory_id("conv_ab12", 4, 0) < high
    assert not low <= memory_id("conv_ab123", 3, 0) < high


def test_thoughts_are_one_deeper_than_their_deepest_evidence():
    seen = new_record("r", 0, 0, "observation", "saw a cat", 0, 3)
    heard = new_record("r", 0, 1, "chat", "Ann: hi", 5, 2)
    thought = new_record("r", 0, 2, "thought", "cats are near", 9, 6, evidence=[seen, heard])
    deeper = new_record("r", 0, 3, "thought", "I like it here", 9, 7, evidence=[thought, seen])
    assert (seen.depth, heard.depth, thought.depth, deeper.depth) == (0, 0, 1, 2)
    assert deeper.evidence == [thought.id, seen.id]
    assert depth_of([]) == 1
    plan = new_record("r", 0, 4, "plan", "talk to Ann", 10, 5, evidence=[heard])
    assert plan.depth == 1 and new_record("r", 0, 5, "plan", "sleep", 10, 1).depth == 0


@pytest.mark.parametrize(
    "change",
    [
        {"importance": 0},
        {"importance": 11},
        {"type": "dream"},
        {"id": "r-m00000-000009"},
        {"last_accessed": 1, "created": 5},
        {"evidence": ["r-m00000-000000"]},  # an observation cites nothing
    ],
)
def test_records_are_validated(change):
    fields = new_record("r", 0, 1, "observation", "x", 3, 5).model_dump() | change
    with pytest.raises(ValidationError):
        MemoryRecord(**fields)


def _stream(n: int, dim: int = 16) -> MemoryStream:
    stream = MemoryStream("run", 2)
    for i in range(n):
        record = stream.make("observation", f"event {i}", created=i * 10, importance=i % 10 + 1)
        stream.add(record, hash_vector(record.text, dim))
    return stream


def test_retrieve_returns_the_best_records_and_marks_them_accessed():
    stream = _stream(200)  # past the first capacity: the arrays grew
    query = hash_vector("event 150", 16)
    best = top_k(stream.scores(query, 3000).total, 5).tolist()
    found = stream.retrieve(query, now=3000, k=5)
    assert [r.seq for r in found] == best
    assert all(r.last_accessed == 3000 for r in found)
    untouched = [r for r in stream.records if r not in found]
    assert all(r.last_accessed == r.created for r in untouched)
    # the arrays follow the records: the same query now scores those five as most recent
    scores = stream.scores(query, 3000)
    chosen = [r.seq for r in found]
    assert scores.recency[chosen].tolist() == [1.0] * 5


def test_relevance_alone_finds_the_same_text():
    stream = _stream(200)
    only_relevance = RetrievalSettings(recency_weight=0, importance_weight=0, top_k=1)
    assert stream.retrieve(hash_vector("event 150", 16), 3000, only_relevance)[0].seq == 150


def test_retrieve_uses_the_settings_k_and_an_empty_stream_returns_nothing():
    assert MemoryStream("run", 0).retrieve(np.ones(4), now=0) == []
    stream = _stream(50)
    assert len(stream.retrieve(np.ones(16), now=600)) == PAPER.top_k
    assert len(stream.retrieve(np.ones(16), now=600, settings=REFERENCE)) == 30


def test_a_stream_rebuilt_from_its_records_retrieves_the_same():
    stream = _stream(120)
    copy = [r.model_copy() for r in stream.records]
    rebuilt = MemoryStream.from_records(copy, hash_vectors([r.text for r in copy], 16))
    query = hash_vector("event 7", 16)
    for now in (1200, 1300):  # the second retrieval sees the first one's accesses
        first = [r.id for r in stream.retrieve(query, now, REFERENCE, k=8)]
        again = [r.id for r in rebuilt.retrieve(query, now, REFERENCE, k=8)]
        assert first == again
    assert stream.unit_embeddings == pytest.approx(rebuilt.unit_embeddings)


def test_make_derives_seq_and_depth_from_the_stream():
    stream = _stream(3)
    thought = stream.make(
        "thought", "a pattern", created=30, importance=8, evidence_ids=[stream.records[0].id]
    )
    assert (thought.seq, thought.depth, thought.evidence) == (3, 1, [stream.records[0].id])
    stream.add(thought, np.ones(16))
    assert stream.get(thought.id) is thought and stream.recent(2)[-1] is thought
    with pytest.raises(KeyError):
        stream.make("thought", "?", created=30, importance=5, evidence_ids=["nope"])


def test_records_out_of_order_or_of_the_wrong_shape_are_refused():
    stream = _stream(2)
    with pytest.raises(ValueError, match="not the next"):
        stream.add(new_record("run", 2, 5, "observation", "x", 30, 1), np.ones(16))
    with pytest.raises(ValueError, match="made before"):
        stream.add(new_record("run", 2, 2, "observation", "x", 0, 1), np.ones(16))
    with pytest.raises(ValueError, match="vectors of length"):
        stream.add(stream.make("observation", "x", 30, 1), np.ones(8))
    assert len(stream) == 2
