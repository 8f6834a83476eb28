"""One agent's memory as an engine drives it: remember, retrieve, know when to reflect.

A thin bundle of the stream (records and vectors), the reflection trigger and the two settings,
so a world's step reads as three calls:

    record = memory.stream.make("observation", text, now, rating.value,
                                importance_fallback=rating.fallback)
    if memory.remember(record, vector):          # True: the threshold was reached
        ...ask the questions over memory.reflection_window(), retrieve per question, store
           each insight with memory.stream.make("thought", ..., evidence_ids=[...])
    found = memory.retrieve(query_vector, now)   # best first; store.memories.touch(ids, now)

The model calls (rating, questions, insights), the embedding and the store stay with the
engine; everything here is pure and resumes from stored records (`from_stored`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from simulator.memory.domain.records import MemoryRecord
from simulator.memory.domain.reflection import (
    PAPER_REFLECTION,
    ReflectionSettings,
    ReflectionTrigger,
    recent_for_reflection,
)
from simulator.memory.domain.retrieval import PAPER, RetrievalSettings
from simulator.memory.domain.stream import MemoryStream


@dataclass
class AgentMemory:
    stream: MemoryStream
    retrieval: RetrievalSettings = PAPER
    reflection: ReflectionSettings = PAPER_REFLECTION
    trigger: ReflectionTrigger = field(default_factory=ReflectionTrigger)

    def __post_init__(self) -> None:
        self.trigger.threshold = self.reflection.threshold

    @classmethod
    def empty(
        cls,
        run_id: str,
        agent_index: int,
        retrieval: RetrievalSettings = PAPER,
        reflection: ReflectionSettings = PAPER_REFLECTION,
    ) -> AgentMemory:
        return cls(MemoryStream(run_id, agent_index), retrieval, reflection)

    @classmethod
    def from_stored(
        cls,
        records: Sequence[MemoryRecord],
        embeddings: np.ndarray,
        retrieval: RetrievalSettings = PAPER,
        reflection: ReflectionSettings = PAPER_REFLECTION,
    ) -> AgentMemory:
        """The memory as it stood after these stored records (stream order, row i the vector
        of record i): the stream rebuilt, the trigger replayed."""
        trigger = ReflectionTrigger.replay(records, reflection.threshold)
        return cls(MemoryStream.from_records(records, embeddings), retrieval, reflection, trigger)

    def remember(self, record: MemoryRecord, embedding: np.ndarray | Sequence[float]) -> bool:
        """Add the stream's next record; True when it brings the agent to reflect now."""
        self.stream.add(record, embedding)
        return self.trigger.add_record(record)

    def retrieve(
        self, query: np.ndarray | Sequence[float], now: int, k: int | None = None
    ) -> list[MemoryRecord]:
        """The best records for `query` at simulated minute `now`, marked as accessed."""
        return self.stream.retrieve(np.asarray(query), now, self.retrieval, k)

    def reflection_window(self) -> list[MemoryRecord]:
        """The records the salient questions are asked about (the most recent N)."""
        return recent_for_reflection(self.stream.records, self.reflection.recent)
