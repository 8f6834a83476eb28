"""One agent's memory stream in memory: its records in stream order, and beside them the
arrays retrieval scores (importance, last access, unit-length vectors as one matrix, and what
picks the candidates: each record's type group and whether its text holds "idle").

Why a matrix: retrieval scores every record against the query on every call, and 10,000
records are one matrix-vector product (about a millisecond) when the vectors sit in one
array, against 100 ms or more rebuilt from lists each time. The arrays grow by
doubling, so adding a record is amortised O(1). Nothing here embeds, asks a model or stores:
the engine hands each record its vector and persists what `retrieve` marks as accessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from simulator.memory.domain.records import MemoryRecord, MemoryType, is_action, new_record
from simulator.memory.domain.retrieval import (
    IDLE_WORD,
    PAPER,
    RetrievalSettings,
    Scores,
    candidate_mask,
    group_of,
    score,
    top_k,
)
from simulator.memory.domain.retrieval import unit_rows as _unit_rows

INITIAL_CAPACITY = 64


class MemoryStream:
    """The records of one agent of one run, with what retrieval needs cached as arrays."""

    def __init__(self, run_id: str, agent_index: int, dim: int | None = None) -> None:
        self.run_id, self.agent_index = run_id, agent_index
        self.records: list[MemoryRecord] = []
        self._at: dict[str, int] = {}
        self._dim = dim
        self._importance = np.zeros(INITIAL_CAPACITY, dtype=np.float64)
        self._last = np.zeros(INITIAL_CAPACITY, dtype=np.int64)
        self._group = np.zeros(INITIAL_CAPACITY, dtype=np.int8)
        self._idle = np.zeros(INITIAL_CAPACITY, dtype=bool)
        self._scratch = np.zeros(INITIAL_CAPACITY, dtype=bool)  # never a candidate
        self._unit: np.ndarray | None = None  # (capacity, dim) float32, made at the first add

    @classmethod
    def from_records(
        cls, records: Sequence[MemoryRecord], embeddings: np.ndarray | Sequence[Sequence[float]]
    ) -> MemoryStream:
        """A stream rebuilt from stored records (in stream order) and their vectors, row i for
        record i: how a resumed run gets its agents' memories back."""
        if not records:
            raise ValueError("no records: make an empty stream with MemoryStream(run, agent)")
        first = records[0]
        stream = cls(first.run_id, first.agent_index)
        stream.extend(records, embeddings)
        return stream

    def __len__(self) -> int:
        return len(self.records)

    @property
    def next_seq(self) -> int:
        return len(self.records)

    @property
    def dim(self) -> int | None:
        return self._dim

    @property
    def unit_embeddings(self) -> np.ndarray:
        """The records' vectors scaled to length 1, row i for record i (a view, not a copy)."""
        if self._unit is None:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return self._unit[: len(self.records)]

    def get(self, record_id: str) -> MemoryRecord:
        return self.records[self._at[record_id]]

    def make(
        self,
        type: MemoryType,
        text: str,
        created: int,
        importance: int,
        *,
        importance_fallback: bool = False,
        evidence_ids: Iterable[str] = (),
    ) -> MemoryRecord:
        """The next record of this stream (not added yet: the engine embeds it, then `add`s).
        Evidence ids must name records of this stream; a thought's depth follows from them."""
        return new_record(
            self.run_id,
            self.agent_index,
            self.next_seq,
            type,
            text,
            created,
            importance,
            importance_fallback=importance_fallback,
            evidence=[self.get(i) for i in evidence_ids],
        )

    def add(self, record: MemoryRecord, embedding: np.ndarray | Sequence[float]) -> None:
        """Append the next record with its vector (any length; stored scaled to length 1)."""
        self.extend([record], np.asarray(embedding, dtype=np.float32)[None, :])

    def extend(
        self, records: Sequence[MemoryRecord], embeddings: np.ndarray | Sequence[Sequence[float]]
    ) -> None:
        """Append records (the next ones, in order) with their vectors, row i for record i."""
        vectors = np.asarray(embeddings, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(records):
            raise ValueError(f"{len(records)} records need a ({len(records)}, dim) matrix")
        if self._dim is None:
            self._dim = vectors.shape[1]
        if vectors.shape[1] != self._dim:
            raise ValueError(f"vectors of length {vectors.shape[1]}; this stream's are {self._dim}")
        previous = self.records[-1].created if self.records else 0
        for offset, record in enumerate(records):
            expected = (self.run_id, self.agent_index, self.next_seq + offset)
            if (record.run_id, record.agent_index, record.seq) != expected:
                raise ValueError(f"record {record.id} is not the next of this stream {expected}")
            if record.created < previous:  # stream order is creation order: `recent` relies on it
                raise ValueError(f"record {record.id} was made before the record it follows")
            previous = record.created
        start, end = len(self.records), len(self.records) + len(records)
        self._reserve(end)
        assert self._unit is not None
        self._unit[start:end] = _unit_rows(vectors)
        self._importance[start:end] = [r.importance for r in records]
        self._last[start:end] = [r.last_accessed for r in records]
        self._group[start:end] = [group_of(r.type) for r in records]
        self._idle[start:end] = [IDLE_WORD in r.text for r in records]
        self._scratch[start:end] = [is_action(r.type, r.text) for r in records]
        for offset, record in enumerate(records):
            self._at[record.id] = start + offset
        self.records.extend(records)

    def scores(self, query: np.ndarray, now: int, settings: RetrievalSettings = PAPER) -> Scores:
        """The candidates' scaled terms and totals for `query` at simulated minute `now`
        (every record, or the settings' subset: `Scores.index` says which)."""
        n = len(self.records)
        group = self._group[:n]
        index = None
        scratch = self._scratch[:n]
        if settings.candidates != "all" or scratch.any():  # a plan's actions: never candidates
            mask = candidate_mask(group, self._idle[:n], settings.candidates) & ~scratch
            index = np.flatnonzero(mask)
        return score(
            self._importance[:n],
            self._last[:n],
            self.unit_embeddings,
            query,
            now,
            settings,
            group,
            index,
        )

    def retrieve(
        self,
        query: np.ndarray | Sequence[float],
        now: int,
        settings: RetrievalSettings = PAPER,
        k: int | None = None,
    ) -> list[MemoryRecord]:
        """The `k` (default: the settings' top_k) best records for `query`, best first; each
        one's last access becomes `now` (the caller stores that: `touch` in the repository)."""
        if not self.records:
            return []
        scores = self.scores(np.asarray(query), now, settings)
        chosen = top_k(scores.total, k or settings.top_k, scores.order)
        if scores.index is not None:
            chosen = scores.index[chosen]
        self._last[chosen] = np.maximum(self._last[chosen], now)
        found = []
        for i in chosen.tolist():
            record = self.records[i]
            record.last_accessed = max(record.last_accessed, now)
            found.append(record)
        return found

    def recent(self, n: int) -> list[MemoryRecord]:
        """The `n` most recently made records, oldest first (stream order is creation order)."""
        return self.records[-n:] if n > 0 else []

    def _reserve(self, size: int) -> None:
        capacity = self._importance.shape[0]
        if self._unit is not None and size <= capacity:
            return
        new = max(capacity, INITIAL_CAPACITY)
        while new < size:
            new *= 2
        self._importance = _grown(self._importance, new)
        self._last = _grown(self._last, new)
        self._group = _grown(self._group, new)
        self._idle = _grown(self._idle, new)
        self._scratch = _grown(self._scratch, new)
        unit = np.zeros((new, self._dim or 0), dtype=np.float32)
        if self._unit is not None:
            unit[: len(self.records)] = self._unit[: len(self.records)]
        self._unit = unit


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    if array.shape[0] >= size:
        return array
    grown = np.zeros(size, dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown
