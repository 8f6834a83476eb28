"""Retrieval: the recency decay, min-max scaling, and a fixed memory set whose top-k under the
paper's and the reference code's weightings was worked out by hand (below, in plain Python)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from simulator.memory.domain.retrieval import (
    EVENT_GROUP,
    PAPER,
    PRESETS,
    REFERENCE,
    THOUGHT_GROUP,
    RetrievalSettings,
    min_max,
    rank_order,
    recency_by_hours,
    recency_by_rank,
    relevance,
    score,
    top_k,
    unit_rows,
)


def test_recency_after_ten_simulated_hours_is_0995_to_the_tenth():
    value = recency_by_hours(np.array([0]), now=10 * 60, decay=0.995)[0]
    assert value == pytest.approx(0.995**10)
    assert round(value, 4) == 0.9511


def test_recency_never_exceeds_one_for_an_access_after_now():
    assert recency_by_hours(np.array([700]), now=600, decay=0.995)[0] == 1.0


def test_min_max_scales_to_unit_interval_and_all_equal_gives_half():
    assert min_max(np.array([2.0, 4.0, 6.0])).tolist() == [0.0, 0.5, 1.0]
    assert min_max(np.array([3.0, 3.0])).tolist() == [0.5, 0.5]
    assert min_max(np.array([7.0])).tolist() == [0.5]
    assert min_max(np.array([])).size == 0


def test_cosine_relevance_ignores_length_and_zero_vectors_score_zero():
    unit = unit_rows(np.array([[2.0, 0.0], [0.0, 5.0], [0.0, 0.0], [3.0, 3.0]]))
    found = relevance(unit, np.array([10.0, 0.0]))
    assert found == pytest.approx([1.0, 0.0, 0.0, math.sqrt(0.5)])
    assert relevance(unit, np.zeros(2)).tolist() == [0.0, 0.0, 0.0, 0.0]


def test_presets_are_the_papers_and_the_reference_codes():
    assert (PAPER.recency_weight, PAPER.importance_weight, PAPER.relevance_weight) == (1, 1, 1)
    assert (PAPER.decay, PAPER.recency) == (0.995, "hours")
    assert (REFERENCE.recency_weight, REFERENCE.importance_weight) == (0.5, 2.0)
    assert (REFERENCE.relevance_weight, REFERENCE.top_k) == (3.0, 30)
    assert (REFERENCE.decay, REFERENCE.recency, REFERENCE.rank_order) == (
        0.995,
        "rank",
        "oldest_first",
    )
    assert (PAPER.candidates, REFERENCE.candidates) == ("all", "events_and_thoughts")
    assert dict(PRESETS) == {"paper": PAPER, "reference": REFERENCE}


def test_settings_are_checked():
    with pytest.raises(ValidationError):
        RetrievalSettings(decay=1.5)
    with pytest.raises(ValidationError):
        RetrievalSettings(top_k=0)
    with pytest.raises(ValidationError):
        RetrievalSettings(recency="days")


# A fixed set of five memories at minute 600 (hour 10), the query pointing along x.
IMPORTANCE = [2, 9, 5, 1, 7]
LAST_ACCESSED = [0, 60, 540, 600, 300]  # minutes: 10, 9, 1, 0 and 5 hours before now
EMBEDDINGS = [[1, 0], [0, 1], [1, 1], [0, 1], [1, -1]]  # cosines 1, 0, .707, 0, .707
QUERY = [1, 0]
NOW = 600


def _by_hand(recency: list[float], weights: tuple[float, float, float]) -> list[int]:
    """The order the spec's formula gives, in plain Python: each term min-max scaled, then
    weighted (recency, importance, relevance); ties keep the earlier record first."""

    def scaled(values: list[float]) -> list[float]:
        low, high = min(values), max(values)
        return [0.5] * len(values) if high == low else [(v - low) / (high - low) for v in values]

    cosines = [
        (a * QUERY[0] + b * QUERY[1]) / (math.hypot(a, b) * math.hypot(*QUERY))
        for a, b in EMBEDDINGS
    ]
    terms = zip(scaled(recency), scaled(IMPORTANCE), scaled(cosines), strict=True)
    totals = [weights[0] * r + weights[1] * i + weights[2] * c for r, i, c in terms]
    return sorted(range(len(totals)), key=lambda n: (-totals[n], n))


def _scored(settings: RetrievalSettings):
    return score(
        np.array(IMPORTANCE),
        np.array(LAST_ACCESSED),
        unit_rows(np.array(EMBEDDINGS, dtype=float)),
        np.array(QUERY, dtype=float),
        NOW,
        settings,
    )


def test_fixed_set_top_k_under_the_papers_weighting():
    # recency 0.995 ** hours: 0.9511, 0.9556, 0.9950, 1.0, 0.9752 -> scaled 0, .098, .898, 1,
    # .494; importance scaled .125, 1, .5, 0, .75; relevance 1, 0, .707, 0, .707.
    # Totals 1.125, 1.098, 2.105, 1.0, 1.951.
    hours = [(NOW - minute) / 60 for minute in LAST_ACCESSED]
    expected = _by_hand([0.995**h for h in hours], (1, 1, 1))
    assert expected == [2, 4, 0, 1, 3]
    scores = _scored(PAPER)
    assert scores.total == pytest.approx([1.125, 1.0978, 2.1048, 1.0, 1.9508], abs=1e-4)
    assert top_k(scores.total, 3).tolist() == [2, 4, 0]
    assert top_k(scores.total, 5).tolist() == expected


def test_fixed_set_top_k_under_the_reference_weighting():
    # ranks by last access as new_retrieve counts them, the oldest first: record 0 (0) 1,
    # 1 (60) 2, 4 (300) 3, 2 (540) 4, 3 (600) 5; recency 0.995 ** rank scaled 1, .748, .248,
    # 0, .497 for records 0..4. Totals (0.5 rec + 3 rel + 2 imp): 3.75, 2.374, 3.245, 0, 3.870.
    ranks = [1, 2, 4, 5, 3]
    expected = _by_hand([0.995**r for r in ranks], (0.5, 2, 3))
    assert expected == [4, 0, 2, 1, 3]
    scores = _scored(REFERENCE)
    assert scores.total == pytest.approx([3.75, 2.3741, 3.2454, 0.0, 3.8701], abs=1e-4)
    assert scores.order.tolist() == [0, 1, 4, 2, 3]
    assert top_k(scores.total, 3, scores.order).tolist() == [4, 0, 2]
    assert top_k(scores.total, 30, scores.order).tolist() == expected  # k beyond: everything


def test_rank_oldest_first_is_the_reference_codes_order_newest_first_the_papers_meaning():
    # new_retrieve sorts by last access ascending and gives decay ** 1 to the first: record 0
    rank = recency_by_rank(np.array(LAST_ACCESSED), 0.995, "oldest_first")
    assert rank == pytest.approx([0.995**1, 0.995**2, 0.995**4, 0.995**5, 0.995**3])
    newest = recency_by_rank(np.array(LAST_ACCESSED), 0.995)
    assert newest == pytest.approx([0.995**5, 0.995**4, 0.995**2, 0.995**1, 0.995**3])


def test_rank_ties_make_the_later_record_the_more_recent():
    assert recency_by_rank(np.array([5, 5, 5]), 0.5).tolist() == [0.125, 0.25, 0.5]


def test_oldest_first_ties_keep_the_codes_list_order_events_then_thoughts_newest_first():
    # seq_event + seq_thought, each newest first, then a stable sort by last access:
    # records 0, 2 are events, 1, 3 thoughts, all accessed at 5; record 4 accessed earlier
    group = np.array([EVENT_GROUP, THOUGHT_GROUP, EVENT_GROUP, THOUGHT_GROUP, EVENT_GROUP])
    order = rank_order(np.array([5, 5, 5, 5, 1]), "oldest_first", group)
    assert order.tolist() == [4, 2, 0, 3, 1]
    values = recency_by_rank(np.array([5, 5, 5, 5, 1]), 0.5, "oldest_first", group)
    assert values.tolist() == [0.125, 0.03125, 0.25, 0.0625, 0.5]


def test_equal_totals_keep_the_given_order():
    total = np.array([1.0, 2.0, 1.0, 2.0])
    assert top_k(total, 4, np.array([3, 2, 1, 0])).tolist() == [3, 1, 2, 0]


def test_top_k_keeps_stream_order_among_equal_scores():
    total = np.array([1.0, 3.0, 1.0, 3.0, 2.0, 1.0])
    assert top_k(total, 2).tolist() == [1, 3]
    assert top_k(total, 4).tolist() == [1, 3, 4, 0]
    assert top_k(total, 0).tolist() == []
    assert top_k(np.array([]), 3).tolist() == []
