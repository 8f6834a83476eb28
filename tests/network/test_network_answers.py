"""The answer parser table, the retry-then-keep rule, and round 0's rounding."""

from __future__ import annotations

import json

import pytest

from simulator.worlds.network.domain.agents_table import AgentRow
from simulator.worlds.network.domain.answers import (
    MAX_ATTEMPTS,
    MAX_CANDIDATES,
    MAX_SCANNED_CHARS,
    Answer,
    opinion_scale,
    parse_answer,
    round_zero,
    settle,
)

GOOD = '{"Thought": "ok", "Opinion": 7, "Decision": "Yes"}'


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (GOOD, Answer("ok", 7, True)),
        ("Let me think. The price is high.\n" + GOOD + "\nThat's all.", Answer("ok", 7, True)),
        ("```json\n" + GOOD + "\n```", Answer("ok", 7, True)),
        ('{"Thought": "ok", "Opinion": "7", "Decision": "yes"}', Answer("ok", 7, True)),
        ('{"Thought": "ok", "Opinion": " 3 ", "Decision": "NO"}', Answer("ok", 3, False)),
        ('{"Thought": "ok", "Opinion": 7.0, "Decision": "No."}', Answer("ok", 7, False)),
        ('{"thought": "ok", "OPINION": 0, "decision": "No"}', Answer("ok", 0, False)),
        ('{"Thought": "a {b} c", "Opinion": 10, "Decision": "Yes"}', Answer("a {b} c", 10, True)),
        (  # nested braces: an object inside the answer
            '{"Thought": "ok", "Opinion": 4, "Decision": "No", "extra": {"a": {"b": 1}}}',
            Answer("ok", 4, False),
        ),
        (  # a wrapper without the keys: the object inside it
            '{"answer": {"Thought": "ok", "Opinion": 6, "Decision": "Yes"}}',
            Answer("ok", 6, True),
        ),
        ("{not json} then " + GOOD, Answer("ok", 7, True)),
        ('{"Opinion": 2} first, then ' + GOOD, Answer("ok", 7, True)),
        ('{"Thought": "ok", "Opinion": 11, "Decision": "Yes"}', None),
        ('{"Thought": "ok", "Opinion": -1, "Decision": "Yes"}', None),
        ('{"Thought": "ok", "Opinion": 7.5, "Decision": "Yes"}', None),
        ('{"Thought": "ok", "Opinion": "seven", "Decision": "Yes"}', None),
        ('{"Thought": "ok", "Opinion": true, "Decision": "Yes"}', None),
        ('{"Thought": "ok", "Opinion": 7, "Decision": "maybe"}', None),
        ('{"Thought": "ok", "Opinion": 7, "Decision": true}', None),
        ('{"Thought": "ok", "Opinion": 7}', None),
        ("I would buy it, 7 out of 10.", None),
        ('{"Thought": "ok", "Opinion": 7, "Decision": "Yes"', None),  # unclosed
        ("", None),
        (None, None),
    ],
)
def test_parser_table(reply, expected):
    assert parse_answer(reply) == expected


def test_the_first_keyed_object_decides():
    """A keyed object with a bad value is a failure; a later good one is not looked for."""
    bad = '{"Thought": "x", "Opinion": 11, "Decision": "Yes"}'
    assert parse_answer(bad + " " + GOOD) is None
    assert parse_answer(GOOD + ' {"Thought": "y", "Opinion": 1, "Decision": "No"}').opinion == 7


@pytest.mark.parametrize(
    "reply",
    ["{" * 100_000, '{"a": "' + "}" * 50_000, '{"a": [' * 30_000, '{"x": 1} ' * 20_000],
    ids=["braces", "unclosed_string", "nested_arrays", "many_unkeyed_objects"],
)
def test_a_hostile_reply_is_read_quickly_and_gives_none(monkeypatch, reply):
    """Quickly, counted rather than timed: at most MAX_CANDIDATES decode attempts, each over
    at most the first MAX_SCANNED_CHARS characters, however long the reply."""
    attempts: list[int] = []

    class Counting(json.JSONDecoder):
        def raw_decode(self, s, idx=0):
            attempts.append(len(s) - idx)  # the most characters this attempt can read
            return super().raw_decode(s, idx)

    monkeypatch.setattr(json, "JSONDecoder", Counting)
    assert parse_answer(reply) is None
    assert 0 < len(attempts) <= MAX_CANDIDATES
    assert max(attempts) <= MAX_SCANNED_CHARS


def test_three_failures_keep_the_previous_answer_and_say_so():
    previous = Answer("before", 4, False)
    bad = '{"Thought": "x", "Opinion": 11, "Decision": "Yes"}'
    assert settle([bad, bad, bad], previous) == (previous, 3, True)
    assert settle([bad, GOOD, bad], previous) == (Answer("ok", 7, True), 2, False)
    assert settle([], previous) == (previous, 0, True)


def test_settle_asks_no_more_than_it_needs():
    asked = []

    def replies():
        for i in range(10):
            asked.append(i)
            yield "no json here"

    assert settle(replies(), Answer("p", 5, True)) == (Answer("p", 5, True), MAX_ATTEMPTS, True)
    assert asked == [0, 1, 2]


def agent(opinion: float, action: int) -> AgentRow:
    return AgentRow("Ann", 0.2, 0.5, 0.3, 0.5, opinion, action, "my reason")


@pytest.mark.parametrize(
    ("opinion", "expected"),
    [(0.0, 0), (0.1, 1), (0.3, 3), (0.45, 4), (0.6, 6), (0.7, 7), (0.99, 9), (1.0, 10)],
)
def test_round_zero_truncates_o_times_10(opinion, expected):
    """int(O x 10), the reference's rule and the spec's check (not round: 0.45 -> 4)."""
    answer = round_zero(agent(opinion, 1))
    assert answer == Answer("my reason", expected, True)
    assert opinion_scale(opinion) == expected


def test_every_tenth_maps_exactly_despite_binary_floats():
    assert [opinion_scale(k / 10) for k in range(11)] == list(range(11))
    assert [opinion_scale((2 * (k / 10) - 1 + 1) / 2) for k in range(11)] == list(range(11))
    assert round_zero(agent(0.5, 0)).as_json() == {
        "Thought": "my reason",
        "Opinion": 5,
        "Decision": "No",
    }
