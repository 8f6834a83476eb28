"""The reflection trigger (fires on the 30th record of importance 5 at 150, then resets; its
state survives a resume) and the choice of records a reflection looks at."""

from __future__ import annotations

from simulator.memory.domain.records import new_record
from simulator.memory.domain.reflection import (
    PAPER_REFLECTION,
    REFERENCE_REFLECTION,
    ReflectionTrigger,
    cited,
    recent_for_reflection,
)


def test_a_reflection_fires_on_the_thirtieth_record_of_importance_five_and_the_sum_resets():
    trigger = ReflectionTrigger(threshold=150)
    fired = [trigger.add(5, seq) for seq in range(30)]
    assert fired == [False] * 29 + [True]
    assert (trigger.total, trigger.count, trigger.fired, trigger.last_fired_seq) == (0, 0, 1, 29)
    again = [trigger.add(5) for _ in range(30)]
    assert again.index(True) == 29 and trigger.fired == 2


def test_the_threshold_is_reached_not_exceeded_and_the_remainder_is_dropped():
    trigger = ReflectionTrigger(threshold=10)
    assert [trigger.add(n) for n in (4, 5, 9)] == [False, False, True]
    assert trigger.total == 0  # 18 reached 10: the sum starts again from 0, as in the reference


def test_thoughts_and_plans_do_not_count_towards_a_reflection():
    trigger = ReflectionTrigger(threshold=10)
    thought = new_record("r", 0, 0, "thought", "hm", 0, 9)
    plan = new_record("r", 0, 1, "plan", "go", 0, 9)
    chat = new_record("r", 0, 2, "chat", "hi", 0, 9)
    seen = new_record("r", 0, 3, "observation", "rain", 0, 1)
    assert [trigger.add_record(r) for r in (thought, plan, chat, seen)] == [
        False,
        False,
        False,
        True,
    ]
    assert trigger.last_fired_seq == 3


def test_trigger_state_survives_a_save_and_a_replay():
    records = [
        new_record("r", 0, seq, "thought" if seq % 7 == 6 else "observation", "x", seq, seq % 9 + 1)
        for seq in range(80)
    ]
    live = ReflectionTrigger(threshold=150)
    for record in records:
        live.add_record(record)
    assert live.fired >= 1
    assert ReflectionTrigger.from_state(live.state()) == live
    assert ReflectionTrigger.replay(records, threshold=150) == live
    assert live.state() == {
        "threshold": 150,
        "total": live.total,
        "count": live.count,
        "fired": live.fired,
        "last_fired_seq": live.last_fired_seq,
    }


def test_presets():
    assert (PAPER_REFLECTION.threshold, PAPER_REFLECTION.recent) == (150, 100)
    assert (PAPER_REFLECTION.questions, PAPER_REFLECTION.insights) == (3, 5)
    assert REFERENCE_REFLECTION.threshold == 250


def test_the_most_recent_records_are_chosen_oldest_first():
    records = [new_record("r", 0, seq, "observation", str(seq), seq // 2, 1) for seq in range(150)]
    chosen = recent_for_reflection(list(reversed(records)), 100)
    assert [r.seq for r in chosen] == list(range(50, 150))
    assert recent_for_reflection(records, 0) == []
    assert len(recent_for_reflection(records[:5], 100)) == 5


def test_cited_numbers_name_the_records_shown_and_made_up_ones_are_dropped():
    shown = [new_record("r", 0, seq, "observation", str(seq), 0, 1) for seq in range(4)]
    assert [r.seq for r in cited([0, 2, 2, 9, -1, 3], shown)] == [0, 2, 3]
    assert cited([], shown) == []
