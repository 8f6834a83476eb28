"""Parsing the model's importance ratings, questions and cited insights, fallbacks counted."""

from __future__ import annotations

import pytest

from simulator.memory.domain.parsers import (
    FALLBACK_IMPORTANCE,
    Insight,
    parse_evidence,
    parse_importance,
    parse_insights,
    parse_questions,
)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("7", 7),
        ("Rating: 7/10", 7),
        ("Rating: 7 / 10", 7),
        ("**8**", 8),
        ("I would rate it 3 out of 10.", 3),
        ("On a scale of 1 to 10, this is a 2.", 2),
        ("1-10: 6", 6),
        ("10", 10),
        ("1", 1),
        ("7.0", 7),
        ("  9\n", 9),
    ],
)
def test_importance_ratings_that_parse(reply, value):
    assert parse_importance(reply) == (value, False)


@pytest.mark.parametrize("reply", ["seven", "", "no idea", "11", "0", "-3", "Rating: 12/10"])
def test_importance_falls_back_to_four_and_says_so(reply):
    rating = parse_importance(reply)
    assert rating == (FALLBACK_IMPORTANCE, True) == (4, True)
    assert rating.fallback


def test_importance_fallbacks_can_be_counted_over_replies():
    replies = ["seven", "7", "Rating: 7/10", "eleven", "5"]
    ratings = [parse_importance(r) for r in replies]
    assert [r.value for r in ratings] == [4, 7, 7, 4, 5]
    assert sum(r.fallback for r in ratings) == 2


def test_evidence_is_read_from_because_of():
    assert parse_evidence("insight text (because of 0, 2)") == Insight(
        "insight text", [0, 2], False
    )
    text, evidence, fallback = parse_evidence("2. Klaus cares about research (because of 1, 5, 3).")
    assert (text, evidence, fallback) == ("Klaus cares about research", [1, 5, 3], False)
    assert parse_evidence("- Ann trusts Bob (Because of 4 and 7)").evidence == [4, 7]


def test_an_insight_without_evidence_is_kept_and_flagged():
    assert parse_evidence("Ann is tired.") == Insight("Ann is tired.", [], True)


def test_insights_and_questions_are_read_one_per_line_up_to_a_limit():
    reply = "1. A (because of 0)\n\n2) B (because of 1, 2)\n3. C\n4. D (because of 3)"
    insights = parse_insights(reply, limit=3)
    assert [(i.text, i.evidence, i.fallback) for i in insights] == [
        ("A", [0], False),
        ("B", [1, 2], False),
        ("C", [], True),
    ]
    questions = parse_questions("1. What does Ann want?\n2. Who is Bob?\n3. Why?\n4. Extra?")
    assert questions == ["What does Ann want?", "Who is Bob?", "Why?"]
    assert parse_questions("") == [] and parse_insights("  \n") == []
