"""Which memories come back for a query: recency, importance and relevance, each min-max scaled
over the candidates (all equal: 0.5), weighted and summed; the k highest win.

Two settings are shipped. PAPER (Park et al. 2023, section 4.1): weights 1, 1, 1; recency
0.995 ** (simulated hours since last access). REFERENCE (joonspk-research/generative_agents,
reverie/backend_server/persona/cognitive_modules/retrieve.py, `new_retrieve`): weights 0.5
recency, 2 importance, 3 relevance (its `gw = [0.5, 3, 2]` multiplies recency, relevance,
importance in that order; the persona's own weights are all 1), the top 30, and recency by
rank: the records ordered by last access, the r-th getting decay ** r, with decay 0.995 (the
25-agent base's scratch.json; the class default is 0.99). As coded there the ranks run from the
least recently accessed (`sorted(..., key=last_accessed)` ascending, `decay ** i` for i = 1..n),
which gives the oldest record the most recency; we rank from the most recent, as the paper
means, and `rank_oldest_first=True` reproduces the code as written.

Everything is numpy over the whole stream at once: 10,000 records score in
1-2 ms (bench/memory_retrieval.py), so no candidate pre-filter is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from simulator.domain.memory.records import MINUTES_PER_HOUR

RecencyMode = Literal["hours", "rank"]


class RetrievalSettings(BaseModel):
    """Weights, decay and k; `recency` says what decays: simulated hours since last access
    (the paper) or rank by last access (the reference code)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recency_weight: float = Field(default=1.0, ge=0)
    importance_weight: float = Field(default=1.0, ge=0)
    relevance_weight: float = Field(default=1.0, ge=0)
    decay: float = Field(default=0.995, gt=0, le=1)
    recency: RecencyMode = "hours"
    top_k: int = Field(default=10, ge=1)
    rank_oldest_first: bool = False  # True: the reference code's rank order, as written


# The paper fixes no k ("the top-ranked memories that fit within the context window"); 10
# keeps a small local model's prompt short. The reference code takes 30.
PAPER = RetrievalSettings()
REFERENCE = RetrievalSettings(
    recency_weight=0.5, importance_weight=2.0, relevance_weight=3.0, recency="rank", top_k=30
)
PRESETS: MappingProxyType[str, RetrievalSettings] = MappingProxyType(
    {"paper": PAPER, "reference": REFERENCE}
)


@dataclass(frozen=True)
class Scores:
    """Each term scaled to [0, 1] over the candidates, and the weighted sum."""

    recency: np.ndarray
    importance: np.ndarray
    relevance: np.ndarray
    total: np.ndarray


def min_max(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; all equal (one candidate, say) gives 0.5 each, as both sources do."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    low, high = values.min(), values.max()
    if high == low:
        return np.full(values.shape, 0.5)
    return (values - low) / (high - low)


def recency_by_hours(last_accessed: np.ndarray, now: int, decay: float) -> np.ndarray:
    """decay ** (simulated hours since last access); minutes in, never above 1."""
    minutes = np.maximum(now - np.asarray(last_accessed, dtype=np.float64), 0.0)
    return np.power(decay, minutes / MINUTES_PER_HOUR)


def recency_by_rank(
    last_accessed: np.ndarray, decay: float, oldest_first: bool = False
) -> np.ndarray:
    """decay ** rank, rank 1 the most recently accessed (ties: the later record is the more
    recent). `oldest_first` ranks from the least recently accessed, as the reference code does."""
    last = np.asarray(last_accessed, dtype=np.int64)
    position = np.arange(last.size)
    keys = (position, last) if oldest_first else (-position, -last)
    order = np.lexsort(keys)  # the last key sorts first
    rank = np.empty(last.size, dtype=np.float64)
    rank[order] = np.arange(1, last.size + 1)
    return np.power(decay, rank)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (a zero row stays zero), so a dot product is the cosine."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def relevance(unit_embeddings: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine similarity of each (unit) row with the query; 0 for a zero vector."""
    q = unit_rows(query)[0]
    if unit_embeddings.shape[0] == 0:
        return np.zeros(0)
    return (unit_embeddings @ q).astype(np.float64)


def score(
    importance: np.ndarray,
    last_accessed: np.ndarray,
    unit_embeddings: np.ndarray,
    query: np.ndarray,
    now: int,
    settings: RetrievalSettings = PAPER,
) -> Scores:
    """The three scaled terms and their weighted sum for every candidate (row i of each input
    is candidate i; rows of `unit_embeddings` have length 1, see `unit_rows`)."""
    if settings.recency == "hours":
        raw_recency = recency_by_hours(last_accessed, now, settings.decay)
    else:
        raw_recency = recency_by_rank(last_accessed, settings.decay, settings.rank_oldest_first)
    rec = min_max(raw_recency)
    imp = min_max(np.asarray(importance, dtype=np.float64))
    rel = min_max(relevance(unit_embeddings, query))
    total = (
        settings.recency_weight * rec
        + settings.importance_weight * imp
        + settings.relevance_weight * rel
    )
    return Scores(rec, imp, rel, total)


def top_k(total: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, highest first; equal scores keep stream order (the
    earlier record first), so the choice never depends on the sort algorithm."""
    n = total.size
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.int64)
    if k < n:
        kth = np.partition(total, n - k)[n - k]  # the k-th highest value
        candidates = np.flatnonzero(total >= kth)
    else:
        candidates = np.arange(n)
    order = np.argsort(-total[candidates], kind="stable")
    return candidates[order][:k]
