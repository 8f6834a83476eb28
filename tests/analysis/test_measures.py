"""Measures on hand-built transcripts whose answers are known."""

from __future__ import annotations

import math

import pytest

from simulator.analysis.measures import (
    ID_COLUMNS,
    MEASURES,
    REFUSAL_MARKERS,
    cell_measures,
    conversation_measures,
    is_refusal,
    mean_ci,
    message_measures,
    near_duplicate,
    t_quantile,
)


def msg(conv: str, seq: int, role: str, text: str, **flags) -> dict:
    return {
        "conversation_id": conv,
        "seq": seq,
        "day": 1,
        "index": seq,
        "speaker": f"{role}_1",
        "role": role,
        "text": text,
        "raw_text": text,
        "trimmed": False,
        "empty": False,
        "speaker_fallback": False,
        "latency_s": 1.0,
        "tokens_in": 10,
        "tokens_out": 5,
        **flags,
    }


def conv(cid: str, cell: str = "c1", status: str = "done", repetition: int = 1) -> dict:
    return {
        "conversation_id": cid,
        "cell_key": cell,
        "cell_label": f"label {cell}",
        "repetition": repetition,
        "status": status,
        "agents_Guard": 1,
        "agents_Prisoner": 1,
    }


def test_message_measures_count_words_chars_and_flags():
    m = message_measures(msg("c", 0, "Guard", "Stand  up, now!", trimmed=True))
    assert m["words"] == 3 and m["chars"] == len("Stand  up, now!")
    assert m["trimmed"] == 1 and m["empty"] == 0 and m["refusal"] == 0
    blank = message_measures(msg("c", 1, "Guard", "   ", empty=False))
    assert blank["empty"] == 1 and blank["words"] == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("As an AI, I have no feelings.", True),
        ("I cannot do that, Prisoner.", True),
        ("I can’t help with this.", True),  # typographic apostrophe
        ("I'm sorry, but that is not allowed.", True),
        ("Line up for the yard.", False),
        ("", False),
    ],
)
def test_refusal_markers(text, expected):
    assert is_refusal(text) is expected
    assert "as an ai" in REFUSAL_MARKERS and "i cannot" in REFUSAL_MARKERS


def test_near_duplicates():
    assert near_duplicate("Get back to your cell.", "get back to your  cell.")
    assert near_duplicate("Get back to your cell now.", "Get back to your cell now!")
    assert not near_duplicate("Get back to your cell.", "I want more yard time.")
    assert not near_duplicate("", "")


def hand_built() -> dict[str, list[dict]]:
    """Conversation a: 4 messages with known words, one trimmed, one refusal, one repeat;
    conversation b: 2 messages, one empty; both in cell c1."""
    messages = [
        msg("a", 0, "Guard", "one two three four"),
        msg("a", 1, "Prisoner", "I cannot comply", trimmed=True),
        msg("a", 2, "Guard", "Back to your cell"),
        msg("a", 3, "Prisoner", "back to your cell", latency_s=3.0),
        msg("b", 0, "Guard", "hello there"),
        msg("b", 1, "Prisoner", "", empty=True, speaker_fallback=True),
    ]
    calls = [
        {"conversation_id": "a", "error": None, "tokens_in": 10, "tokens_out": 5},
        {"conversation_id": "a", "error": "boom", "tokens_in": None, "tokens_out": None},
        {"conversation_id": "b", "error": None, "tokens_in": 7, "tokens_out": 3},
    ]
    scores = [
        {"conversation_id": "a", "scorer": "judge", "target_kind": "conversation",
         "field": "hostile", "value": "yes", "value_num": 1.0},
        {"conversation_id": "a", "scorer": "tox", "target_kind": "message",
         "field": "p", "value": "0.2", "value_num": 0.2},
        {"conversation_id": "a", "scorer": "tox", "target_kind": "message",
         "field": "p", "value": "0.6", "value_num": 0.6},
    ]  # fmt: skip
    return {
        "conversations": [conv("a"), conv("b", status="failed", repetition=2)],
        "messages": list(reversed(messages)),  # order comes from seq, not from the list
        "calls": calls,
        "scores": scores,
        "summaries": [],
    }


def test_conversation_measures_have_known_answers():
    rows = {r["conversation_id"]: r for r in conversation_measures(hand_built())}
    a, b = rows["a"], rows["b"]
    assert a["messages"] == 4 and a["words"] == (4 + 3 + 4 + 4) / 4
    assert a["words_Guard"] == 4 and a["words_Prisoner"] == 3.5
    assert a["chars_Guard"] == (len("one two three four") + len("Back to your cell")) / 2
    assert a["trimmed_share"] == 0.25 and a["refusal_share"] == 0.25
    assert a["repetition_share"] == pytest.approx(1 / 3)  # 3 consecutive pairs, one repeat
    assert a["empty_share"] == 0 and a["fallback_share"] == 0
    assert a["latency_s"] == pytest.approx(1.5)
    assert a["calls"] == 2 and a["call_failure_rate"] == 0.5 and a["tokens_out"] == 5
    assert a["failed"] == 0 and b["failed"] == 1
    assert a["score_judge_hostile"] == 1.0 and a["score_tox_p"] == pytest.approx(0.4)
    assert b["empty_share"] == 0.5 and b["fallback_share"] == 0.5
    assert b["repetition_share"] == 0 and b["words_Prisoner"] == 0


def test_t_quantiles_and_interval():
    assert t_quantile(2) == 4.303 and t_quantile(30) == 2.042
    assert t_quantile(45) == 2.021 and t_quantile(500) == 1.96
    mean, low, high = mean_ci([1, 2, 3])
    half = 4.303 * 1 / math.sqrt(3)
    assert mean == 2 and low == pytest.approx(2 - half) and high == pytest.approx(2 + half)
    assert mean_ci([5]) == (5, None, None)  # one repetition: no spread to estimate
    assert mean_ci([None, None]) == (None, None, None)


def test_cell_measures_group_by_cell():
    rows = [
        {**conv("x1", "c1"), "words": 1.0, "refusal_share": None},
        {**conv("x2", "c1"), "words": 2.0, "refusal_share": 0.5},
        {**conv("x3", "c1"), "words": 3.0, "refusal_share": None},
        {**conv("y1", "c2"), "words": 10.0, "refusal_share": 0.0},
    ]
    cells = {c["cell_key"]: c for c in cell_measures(rows)}
    c1, c2 = cells["c1"], cells["c2"]
    assert c1["n"] == 3 and c1["cell_label"] == "label c1"
    assert c1["words_mean"] == 2 and c1["words_ci_high"] == pytest.approx(2 + 4.303 / math.sqrt(3))
    assert c1["refusal_share_mean"] == 0.5 and c1["refusal_share_ci_low"] is None
    assert c2["n"] == 1 and c2["words_mean"] == 10 and c2["words_ci_low"] is None
    assert "repetition_mean" not in c1 and "agents_Guard_mean" in c1


def test_every_measure_is_documented():
    rows = conversation_measures(hand_built())
    documented = set(MEASURES)
    for name in rows[0]:
        if name in ID_COLUMNS:  # ids, status, and where a fork's measures start
            continue
        pattern = (
            "score_<scorer>_<field>"
            if name.startswith("score_")
            else f"{name.split('_')[0]}_<Role>"
            if name.split("_")[-1] in ("Guard", "Prisoner")
            else name
        )
        assert pattern in documented, name
