"""The third plan level (Park et al. 4.3; the reference code's task_decomp): when an hour
begins, each agent breaks its hour block into 5-15-minute actions (memory_plan_actions),
stored as plan records citing the block; {plan} shows the block and the action under way,
{action} the actions the step overlaps. Reactions are asked once per agent per step."""

from __future__ import annotations

from collections import Counter

import pytest
from grid_plan_helpers import moves_shown, run_grid, start

from simulator.memory.domain.parsers import parse_actions
from simulator.memory.testing.replies import memory_stream_reply
from simulator.testing import StubLLMServer

QUARTERS = [f"agent0 is doing task {n}" for n in range(1, 5)]


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.002) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = memory_stream_reply(rating="5", move="stay")
        yield server


def test_hour_blocks_become_quarter_hour_actions_shown_in_the_move_prompt(store, stub, tmp_path):
    run_id = start(store, tmp_path, minutes=60, steps=3)
    outcome = run_grid(store, run_id)
    assert outcome.status == "done", outcome.error
    calls = store.calls.for_conversation(run_id)
    by_step = Counter(
        (c["day"], c["agent"]) for c in calls if c["purpose"] == "memory_plan_actions"
    )
    assert by_step == {(s, a): 1 for s in (1, 2, 3) for a in ("agent0", "agent1")}
    stream = store.memories.stream(run_id, 0)
    blocks = {r.text: r for r in stream if r.type == "plan" and r.text[2:6] == ":00 "}
    actions = [r for r in stream if r.type == "plan" and r.text[5:6] == "-"]
    eight = [r for r in actions if r.text.startswith("08:")]
    assert [r.text for r in eight] == [
        f"{a}-{b} {what}"
        for (a, b), what in zip(
            [("08:00", "08:15"), ("08:15", "08:30"), ("08:30", "08:45"), ("08:45", "09:00")],
            QUARTERS,
            strict=True,
        )
    ]
    assert all(r.evidence == [blocks["08:00 walk around"].id] for r in eight)
    shown = moves_shown(store, run_id, "agent0")
    assert shown[0] == [
        "Plan now: walk around; now: agent0 is doing task 1",
        "Actions: " + "; ".join(r.text for r in eight),
    ]
    assert shown[2][0] == "Plan now: talk to the others; now: agent0 is doing task 1"
    assert outcome.counters["plan_fallbacks"] == 0
    # each agent heard the other in every step: asked once a step whether to talk, then
    # (the stub says no) once whether to react; nobody talked
    for purpose in ("memory_decide_talk", "memory_react"):
        asked = Counter((c["day"], c["agent"]) for c in calls if c["purpose"] == purpose)
        assert asked == {(s, a): 1 for s in (1, 2, 3) for a in ("agent0", "agent1")}, purpose
    assert outcome.counters["talks"] == 0 and outcome.counters["react_fallbacks"] == 0


def test_ten_minute_steps_show_the_current_action_and_decompose_once_an_hour(store, stub, tmp_path):
    run_id = start(store, tmp_path, minutes=10, steps=7)
    assert run_grid(store, run_id).status == "done"
    calls = store.calls.for_conversation(run_id)
    decomposed = sorted(c["day"] for c in calls if c["purpose"] == "memory_plan_actions")
    assert decomposed == [1, 1, 7, 7]  # 08:00 and 09:00
    shown = [lines[1] for lines in moves_shown(store, run_id, "agent0")]
    assert shown[0] == "Actions: 08:00-08:15 agent0 is doing task 1"
    assert shown[1] == (
        "Actions: 08:00-08:15 agent0 is doing task 1; 08:15-08:30 agent0 is doing task 2"
    )
    assert shown[6] == "Actions: 09:00-09:15 agent0 is doing task 1"


def test_an_unusable_decomposition_is_counted_and_the_block_stays_one_action(store, stub, tmp_path):
    scripted = memory_stream_reply(rating="5", move="stay")
    stub.reply_fn = lambda body: (
        "I will do things."
        if "list the subtasks" in body["messages"][-1]["content"]
        else scripted(body)
    )
    run_id = start(store, tmp_path, minutes=60, steps=1)
    outcome = run_grid(store, run_id)
    assert outcome.counters["plan_fallbacks"] == 2  # one per agent
    texts = [r.text for r in store.memories.stream(run_id, 1) if r.type == "plan"]
    assert "08:00-09:00 walk around" in texts
    assert moves_shown(store, run_id, "agent1")[0] == [
        "Plan now: walk around; now: walk around",
        "Actions: 08:00-09:00 walk around",
    ]


def test_two_plan_levels_make_no_actions(store, stub, tmp_path):
    run_id = start(store, tmp_path, minutes=60, steps=2, plan_levels=2)
    assert run_grid(store, run_id).status == "done"
    purposes = Counter(c["purpose"] for c in store.calls.for_conversation(run_id))
    assert purposes["memory_plan_actions"] == 0 and purposes["memory_plan_hours"] == 2
    assert moves_shown(store, run_id, "agent0")[0] == ["Plan now: walk around", "Actions: "]


def test_the_action_parser_fits_the_hour_as_the_code_does():
    reply = (
        "1) Sam is setting up (duration in minutes: 15, minutes left: 45)\n"
        "2) Sam is sketching (duration in minutes: 30, minutes left: 15)\n"
        "no duration here\n"
        "3) Sam is mixing paint (duration in minutes: 30, minutes left: 0)"
    )
    assert parse_actions(reply, 60) == [
        (15, "Sam is setting up"),
        (30, "Sam is sketching"),
        (15, "Sam is mixing paint"),
    ]
    assert parse_actions(reply, 90)[-1] == (45, "Sam is mixing paint")  # stretched to the end
    assert parse_actions("Sam paints all hour", 60) == []
