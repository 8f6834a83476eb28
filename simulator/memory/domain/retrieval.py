"""Which memories come back for a query: recency, importance and relevance, each min-max scaled
over the candidates (all equal: 0.5), weighted and summed; the k highest win.

Two settings are shipped. PAPER (Park et al. 2023, section 4.1): weights 1, 1, 1; recency
0.995 ** (simulated hours since last access); every record a candidate. REFERENCE
(joonspk-research/generative_agents, reverie/backend_server/persona/cognitive_modules/
retrieve.py, `new_retrieve`) is that code's ranking, step for step:
- candidates: `seq_event + seq_thought`, leaving out chats and every record whose text holds
  "idle" (its `"idle" not in i.embedding_key`); our plans are thoughts there (plan.py stores
  them with `add_thought`). Both lists are newest first (associative_memory.py inserts each
  node at the front), events before thoughts;
- that list stably sorted by last access, oldest first, and the r-th given decay ** r
  (`extract_recency`), so the least recently accessed gets the most recency: ties in last
  access keep the list's order (events newest first, then thoughts newest first);
- decay 0.995 (the 25-agent base's scratch.json; scratch.py's default is 0.99);
- weights 0.5 recency, 3 relevance, 2 importance (`gw = [0.5, 3, 2]`; the persona's own
  `recency_w`, `relevance_w`, `importance_w` are 1), summed in that order;
- a stable sort, highest first (`top_highest_x_values`): equal totals keep the sorted
  candidates' order; the top 30.
Each step is a setting of its own (`recency`, `rank_order`, `candidates`, the weights, `decay`,
`top_k`), so a run can take the code's ranking with one part changed. `rank_order`
newest_first ranks from the most recent access instead, as the paper means recency.

Relevance is computed on float32 unit vectors (the code: float64 cosine), so two totals
within about 1e-6 of each other may order differently; nothing else differs.

Everything is numpy over the whole stream at once: 10,000 records score in
1-2 ms (bench/memory_retrieval.py), so no candidate pre-filter is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from simulator.memory.domain.records import MINUTES_PER_HOUR

if TYPE_CHECKING:  # numpy loads when a stream is scored: an experiment's settings need none
    import numpy as np

RecencyMode = Literal["hours", "rank"]
RankOrder = Literal["oldest_first", "newest_first"]
Candidates = Literal["all", "events_and_thoughts"]
# each record's place in the reference code's candidate list: its events, then its thoughts
# (ours: thoughts and plans), then chats (which that code leaves out)
EVENT_GROUP, THOUGHT_GROUP, CHAT_GROUP = 0, 1, 2
GROUPS = {"observation": EVENT_GROUP, "thought": THOUGHT_GROUP, "plan": THOUGHT_GROUP}
IDLE_WORD = "idle"  # new_retrieve leaves out every node whose text contains it


def group_of(memory_type: str) -> int:
    """A record type's place in the reference code's candidate list (chats last)."""
    return GROUPS.get(memory_type, CHAT_GROUP)


class RetrievalSettings(BaseModel):
    """Weights, decay, k and the candidates; `recency` says what decays: simulated hours since
    last access (the paper) or rank by last access (the reference code), counted from the
    least recently accessed (`oldest_first`, as that code does) or the most recent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recency_weight: float = Field(default=1.0, ge=0)
    importance_weight: float = Field(default=1.0, ge=0)
    relevance_weight: float = Field(default=1.0, ge=0)
    decay: float = Field(default=0.995, gt=0, le=1)
    recency: RecencyMode = "hours"
    top_k: int = Field(default=10, ge=1)
    rank_order: RankOrder = "newest_first"
    candidates: Candidates = "all"


# The paper fixes no k ("the top-ranked memories that fit within the context window"); 10
# keeps a small local model's prompt short. The reference code takes 30.
PAPER = RetrievalSettings()
REFERENCE = RetrievalSettings(
    recency_weight=0.5,
    importance_weight=2.0,
    relevance_weight=3.0,
    recency="rank",
    top_k=30,
    rank_order="oldest_first",
    candidates="events_and_thoughts",
)
PRESETS: MappingProxyType[str, RetrievalSettings] = MappingProxyType(
    {"paper": PAPER, "reference": REFERENCE}
)


@dataclass(frozen=True)
class Scores:
    """Each term scaled to [0, 1] over the candidates, and the weighted sum. `order` is the
    candidates' positions in the order equal totals keep (None: their own order); `index`
    the candidates' places in the stream (None: every record, in stream order)."""

    recency: np.ndarray
    importance: np.ndarray
    relevance: np.ndarray
    total: np.ndarray
    order: np.ndarray | None = None
    index: np.ndarray | None = None


def min_max(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; all equal (one candidate, say) gives 0.5 each, as both sources do."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    low, high = values.min(), values.max()
    if high == low:
        return np.full(values.shape, 0.5)
    return (values - low) / (high - low)


def recency_by_hours(last_accessed: np.ndarray, now: int, decay: float) -> np.ndarray:
    """decay ** (simulated hours since last access); minutes in, never above 1."""
    import numpy as np

    minutes = np.maximum(now - np.asarray(last_accessed, dtype=np.float64), 0.0)
    return np.power(decay, minutes / MINUTES_PER_HOUR)


def rank_order(
    last_accessed: np.ndarray, order: RankOrder = "newest_first", group: np.ndarray | None = None
) -> np.ndarray:
    """The candidates' positions, rank 1 first. `newest_first`: the most recently accessed
    first, ties the later record first. `oldest_first`, as new_retrieve ranks: the least
    recently accessed first, ties in the code's list order (`group` ascending: events, then
    thoughts, then chats; within a group the later record first)."""
    import numpy as np

    last = np.asarray(last_accessed, dtype=np.int64)
    position = np.arange(last.size)
    if order == "newest_first":
        return np.lexsort((-position, -last))  # the last key sorts first
    groups = np.zeros(last.size, dtype=np.int64) if group is None else np.asarray(group)
    return np.lexsort((-position, groups, last))


_POWERS: dict[float, np.ndarray] = {}  # decay -> decay ** 1.. as far as asked so far


def powers(decay: float, n: int) -> np.ndarray:
    """decay ** 1 .. decay ** n, each as Python's float power gives it (the code's own
    `decay ** i`), so equal inputs give bit-equal scores; kept per decay, grown as asked."""
    import numpy as np

    known = _POWERS.get(decay, np.zeros(0))
    if known.size < n:
        more = (decay**i for i in range(known.size + 1, n + 1))
        known = np.concatenate([known, np.fromiter(more, dtype=np.float64)])
        _POWERS[decay] = known
    return known[:n]


def recency_by_rank(
    last_accessed: np.ndarray,
    decay: float,
    order: RankOrder = "newest_first",
    group: np.ndarray | None = None,
) -> np.ndarray:
    """decay ** rank, ranks as `rank_order` gives them."""
    import numpy as np

    ranked = rank_order(last_accessed, order, group)
    values = np.empty(ranked.size, dtype=np.float64)
    values[ranked] = powers(decay, ranked.size)
    return values


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (a zero row stays zero), so a dot product is the cosine."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def relevance(unit_embeddings: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine similarity of each (unit) row with the query; 0 for a zero vector."""
    import numpy as np

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
    group: np.ndarray | None = None,
    index: np.ndarray | None = None,
) -> Scores:
    """The three scaled terms and their weighted sum for every candidate (row i of each input
    is record i, in stream order; rows of `unit_embeddings` have length 1, see `unit_rows`;
    `group` as `rank_order` takes it; `index`: the records that are candidates, None for
    all). The sum runs recency, relevance, importance, as new_retrieve adds them, so its
    totals are bit-equal to the code's."""
    import numpy as np

    cosines = relevance(unit_embeddings, query)  # one product over the matrix, then picked
    if index is not None:
        importance, last_accessed = np.asarray(importance)[index], np.asarray(last_accessed)[index]
        cosines = cosines[index]
        group = None if group is None else np.asarray(group)[index]
    order = None
    if settings.recency == "hours":
        raw_recency = recency_by_hours(last_accessed, now, settings.decay)
    else:
        order = rank_order(last_accessed, settings.rank_order, group)
        raw_recency = np.empty(order.size, dtype=np.float64)
        raw_recency[order] = powers(settings.decay, order.size)
    rec = min_max(raw_recency)
    imp = min_max(np.asarray(importance, dtype=np.float64))
    rel = min_max(cosines)
    total = (
        settings.recency_weight * rec
        + settings.relevance_weight * rel
        + settings.importance_weight * imp
    )
    return Scores(rec, imp, rel, total, order, index)


def top_k(total: np.ndarray, k: int, order: np.ndarray | None = None) -> np.ndarray:
    """Indices of the k highest scores, highest first. Equal scores keep their place in
    `order` (the candidates' positions, as `Scores.order`; None: the earlier record first),
    as a stable sort does, so the choice never depends on the sort algorithm."""
    import numpy as np

    n = total.size
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.int64)
    place = np.arange(n)
    if order is not None:
        place[order] = np.arange(n)
    if k < n:
        kth = np.partition(total, n - k)[n - k]  # the k-th highest value
        candidates = np.flatnonzero(total >= kth)
    else:
        candidates = np.arange(n)
    ranked = np.lexsort((place[candidates], -total[candidates]))
    return candidates[ranked][:k]


def candidate_mask(group: np.ndarray, idle: np.ndarray, candidates: Candidates) -> np.ndarray:
    """Which records retrieval scores: all, or the reference code's events and thoughts
    (no chats, nothing whose text holds "idle")."""
    import numpy as np

    if candidates == "all":
        return np.ones(np.asarray(group).size, dtype=bool)
    return (np.asarray(group) != CHAT_GROUP) & ~np.asarray(idle, dtype=bool)
