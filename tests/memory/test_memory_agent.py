"""One agent's memory driven as an engine would: remember observations, reflect when the
trigger says so (parsed insights stored as thoughts citing evidence), retrieve, resume."""

from __future__ import annotations

from simulator.memory.domain.agent_memory import AgentMemory
from simulator.memory.domain.parsers import parse_importance, parse_insights
from simulator.memory.domain.reflection import REFERENCE_REFLECTION, cited
from simulator.memory.domain.retrieval import REFERENCE
from simulator.memory.domain.vectors import hash_vector, hash_vectors

DIM = 32


def _observe(memory: AgentMemory, text: str, now: int, reply: str) -> bool:
    rating = parse_importance(reply)
    record = memory.stream.make(
        "observation", text, now, rating.value, importance_fallback=rating.fallback
    )
    return memory.remember(record, hash_vector(text, DIM))


def _reflect(memory: AgentMemory, now: int, reply: str) -> list:
    shown = memory.reflection_window()
    stored = []
    for insight in parse_insights(reply):
        evidence = [r.id for r in cited(insight.evidence, shown)]
        thought = memory.stream.make("thought", insight.text, now, 7, evidence_ids=evidence)
        memory.remember(thought, hash_vector(thought.text, DIM))
        stored.append(thought)
    return stored


def test_an_agent_reflects_on_the_thirtieth_observation_and_thoughts_do_not_count():
    memory = AgentMemory.empty("conv_a1", 0)
    due = [_observe(memory, f"saw event {i}", i * 10, "5") for i in range(30)]
    assert due == [False] * 29 + [True]
    thoughts = _reflect(memory, 300, "1. events repeat (because of 0, 29)\n2. odd (because of 99)")
    assert [t.evidence for t in thoughts] == [
        [memory.stream.records[0].id, memory.stream.records[29].id],
        [],  # record 99 was never shown: the citation is dropped
    ]
    assert [t.depth for t in thoughts] == [1, 1]
    assert memory.trigger.total == 0 and memory.trigger.fired == 1
    found = memory.retrieve(hash_vector("events repeat", DIM), now=310, k=3)
    assert found[0].text == "events repeat" and found[0].last_accessed == 310


def test_a_fallback_rating_is_kept_on_the_record():
    memory = AgentMemory.empty("conv_a2", 1)
    _observe(memory, "a bird sang", 0, "seven")
    record = memory.stream.records[0]
    assert (record.importance, record.importance_fallback) == (4, True)


def test_a_memory_rebuilt_from_its_records_is_where_the_live_one_was():
    live = AgentMemory.empty("conv_a3", 0, REFERENCE, REFERENCE_REFLECTION)
    replies = ["9", "8", "Rating: 7/10", "6"] * 20
    for i, reply in enumerate(replies):
        if _observe(live, f"news {i}", i * 15, reply):
            _reflect(live, i * 15, "1. there is much news (because of 0, 1, 2)")
    assert live.trigger.fired == 2  # 80 observations of 7.5 on average, threshold 250
    records = [r.model_copy() for r in live.stream.records]
    resumed = AgentMemory.from_stored(
        records, hash_vectors([r.text for r in records], DIM), REFERENCE, REFERENCE_REFLECTION
    )
    assert resumed.trigger == live.trigger
    query = hash_vector("news 3", DIM)
    assert [r.id for r in resumed.retrieve(query, 2000)] == [
        r.id for r in live.retrieve(query, 2000)
    ]
    assert len(live.reflection_window()) == 82  # 80 observations, 2 thoughts: all under 100
