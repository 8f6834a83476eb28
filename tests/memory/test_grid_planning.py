"""Daily plans in the grid's memory stream: at the first step of each simulated day every agent
plans its day (memory_plan) and breaks it into hour blocks (memory_plan_hours), both stored as
plan records (the blocks citing the day's plan); `{plan}` shows the block of the step's hour.
These runs choose two plan levels and our importance rule for reactions (LEGACY, what every
spec stored before those settings runs with); tests/memory/test_grid_actions.py and
test_grid_talk.py run the paper's defaults."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML, run_grid

from simulator.memory.domain.parsers import parse_hourly_plan, parse_reaction
from simulator.memory.domain.settings import MemorySettings
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.grid.services import runs as grid_runs

PARTY = {"on": False}  # agent1 invites everyone (the re-planning test)
LEGACY = {"plan_levels": 2, "react": "importance_at_least", "talk": False}


@pytest.fixture
def stub(monkeypatch):
    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if prompt.endswith("Rating:"):
            return "9" if "party" in prompt else "5"
        if "Should agent" in prompt:
            return "Yes\nGo to the party"
        if "now means to: Go to the party" in prompt:
            return "09:00 walk to the party\n10:00 dance"
        if "broad plan" in prompt:
            return "1. 08:00 open the cafe\n2. 12:00 invite friends to the party"
        if "hour-by-hour" in prompt:
            return "08:00 open the cafe\n09:00 serve coffee\n10:00 invite agent1\n16:00 close"
        if "Choose your next move" in prompt:
            return "stay"
        return "come to my party" if PARTY["on"] and "You are agent1" in prompt else "hi"

    with StubLLMServer(models=["stub"], latency_s=0.01) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = reply
        yield server


def _run(store, tmp_path, minutes: int, steps: int):
    doc = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
    doc["memory"] = {
        "kind": "stream",
        "embedder": "mock:16",
        "reflection": False,
        "minutes_per_step": minutes,
        **LEGACY,
    }
    doc["prompts"]["move"] = "Plan now: {plan}\n" + doc["prompts"]["move"]
    path = tmp_path / "plans.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    view = exp_service.import_yaml(store, path, "alice")
    world = {"agents": 2, "steps": steps, "radius": 25}
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world=world)
    run_id = run_service.create_run(store, view, spec, "alice")["_id"]
    outcome = run_grid(store, run_id)
    assert outcome.status == "done", outcome.error
    return spec, run_id, outcome


def test_each_agent_plans_its_day_and_the_move_prompt_shows_the_hour(store, stub, tmp_path):
    spec, run_id, outcome = _run(store, tmp_path, minutes=60, steps=3)
    assert "memory.planning: true (not given)" in spec.defaults_applied
    assert "memory.react_importance: 7 (not given)" in spec.defaults_applied
    calls = store.calls.for_conversation(run_id)
    purposes = Counter(c["purpose"] for c in calls)
    assert purposes["memory_plan"] == 2 and purposes["memory_plan_hours"] == 2
    assert "memory_react" not in purposes  # nothing rated 7 or more: no reaction asked
    assert outcome.counters["plan_fallbacks"] == 0
    plans = [r for r in store.memories.stream(run_id, 0) if r.type == "plan"]
    day, hours = plans[:2], plans[2:]
    assert [r.text for r in day] == ["08:00 open the cafe", "12:00 invite friends to the party"]
    assert [r.text for r in hours][:3] == [
        "08:00 open the cafe",
        "09:00 serve coffee",
        "10:00 invite agent1",
    ]
    assert all(r.evidence == [p.id for p in day] and r.depth == 1 for r in hours)
    assert all(r.created == 1 for r in plans)  # one simulated minute into step 1
    moves = sorted(
        (c for c in calls if c["purpose"] == "grid_move" and c["agent"] == "agent0"),
        key=lambda c: c["day"],
    )
    shown = [store.calls.prompt(c["prompt_hash"])[-1]["content"].split("\n")[0] for c in moves]
    assert shown == ["Plan now: open the cafe", "Plan now: serve coffee", "Plan now: invite agent1"]


def test_a_new_simulated_day_brings_a_new_plan(store, stub, tmp_path):
    # 8 h a step from 08:00: step 1 at 08:00 and step 2 at 16:00 of day 1, step 3 at 00:00 of day 2
    _, run_id, _ = _run(store, tmp_path, minutes=480, steps=3)
    calls = [c for c in store.calls.for_conversation(run_id) if c["purpose"] == "memory_plan"]
    assert sorted(Counter(c["day"] for c in calls).items()) == [(1, 2), (3, 2)]


def test_the_hour_parser_keeps_hours_in_range_and_the_first_of_each():
    reply = "Here you go:\n- 07:00 too early\n**09:00** coffee\n09:30 again\n10.00 - walk\n23:00 x"
    assert parse_hourly_plan(reply, 8, 22) == {9: "coffee", 10: "walk"}
    assert parse_hourly_plan("no times here", 8, 22) == {}


def test_an_important_perception_that_calls_for_a_reaction_replans_the_rest_of_the_day(
    store, stub, tmp_path
):
    """agent1 says "come to my party" (rated 9); agent0 is asked whether to react, says yes,
    and its blocks from the next step's hour are replaced, citing what it heard."""
    PARTY["on"] = True
    try:
        _, run_id, _ = _run(store, tmp_path, minutes=60, steps=3)
    finally:
        PARTY["on"] = False
    calls = store.calls.for_conversation(run_id)
    reacts = [c for c in calls if c["purpose"] == "memory_react"]
    assert {c["agent"] for c in reacts} == {"agent0", "agent1"}  # both heard agent1 at 9
    stream = store.memories.stream(run_id, 0)
    heard = next(r for r in stream if r.text == "agent1 said: come to my party")
    replanned = [r for r in stream if r.type == "plan" and heard.id in r.evidence]
    assert [r.text for r in replanned[:2]] == ["09:00 walk to the party", "10:00 dance"]
    moves = sorted(
        (c for c in calls if c["purpose"] == "grid_move" and c["agent"] == "agent0"),
        key=lambda c: c["day"],
    )
    shown = [store.calls.prompt(c["prompt_hash"])[-1]["content"].split("\n")[0] for c in moves]
    assert shown == ["Plan now: open the cafe", "Plan now: walk to the party", "Plan now: dance"]


def test_the_reaction_parser_reads_yes_and_the_plan():
    assert parse_reaction("Yes\nGo to the party") == "Go to the party"
    assert parse_reaction("yes, go now.") == "go now."
    assert parse_reaction("No, keep working") == ""
    assert parse_reaction("Maybe later") == ""


def test_a_stream_without_reflection_notes_no_threshold():
    resolved, notes = MemorySettings(kind="stream", reflection=False).resolved()
    assert resolved.reflection_threshold is None
    assert not any("reflection_threshold" in note for note in notes)
    assert "memory.planning: true (not given)" in notes
    _, notes = MemorySettings(kind="stream").resolved()
    assert "memory.reflection_threshold: 150 (not given)" in notes


def test_a_spec_stored_before_the_planning_keys_keeps_two_levels_and_importance_7():
    """Its memory block has planning but none of the new keys: it resumes as it ran."""
    stored = MemorySettings.model_validate(
        {"kind": "stream", "planning": True, "minutes_per_step": 60, "retrieval": "paper"}
    )
    assert stored.plan_rules() == (2, "importance_at_least", 7, False, 16)
    assert "plan_levels" not in stored.model_dump() and "talk" not in stored.model_dump()
    assert "day and hours; a reaction asked at importance 7; no talk" in stored.describe()


def test_new_specs_store_the_papers_planning_values_and_unset_keys_stay_out_of_the_dump():
    block = MemorySettings(kind="stream")
    assert set(block.model_dump()) & {"plan_levels", "react", "talk", "talk_turns"} == set()
    resolved, notes = block.resolved()
    assert resolved.model_dump()["plan_levels"] == 3 and resolved.react == "every_step"
    assert resolved.talk is True and resolved.talk_turns == 16
    assert resolved.react_importance is None  # decides nothing with every_step
    assert "memory.talk_turns: 16 (not given)" in notes
    assert "a reaction asked each step; talk up to 16 lines" in resolved.describe()
    assert MemorySettings(kind="stream", talk=False).resolved()[0].talk_turns is None


@pytest.mark.parametrize(
    ("block", "says"),
    [
        ({"planning": False, "talk": True}, r"memory\.talk shapes plans"),
        ({"react_importance": 5}, "react: importance_at_least"),
        ({"talk": False, "talk_turns": 4}, r"memory\.talk_turns bounds"),
        ({"plan_levels": 4}, "plan_levels"),
    ],
)
def test_planning_keys_that_would_decide_nothing_are_refused(block, says):
    with pytest.raises(ValueError, match=says):
        MemorySettings.model_validate({"kind": "stream", **block})


def test_a_world_without_hours_refuses_the_planning_keys():
    with pytest.raises(ValueError, match=r"memory\.talk \(plans"):
        MemorySettings(kind="stream", talk=True).resolved(world_plans=False)
