"""Talk (Park et al. 4.3; the reference code's _chat_react and agent_chat_v2): an agent that
would start a conversation with the one it heard holds one, a line a call, until a line ends
it; the conversation is a chat record in both streams and on both rows, both agents' actions
for the hour are re-planned around it, the pair waits out the code's buffer before talking
again, and a run cut at any call, mid-talk included, resumes to the uninterrupted run."""

from __future__ import annotations

from collections import Counter

import pytest
from grid_plan_helpers import run_grid, start

from simulator.memory.domain.parsers import parse_utterance
from simulator.memory.engine.keeper import COUNTERS
from simulator.memory.testing.replies import memory_stream_reply
from simulator.testing import StubLLMServer

LINES = [
    "agent0: agent0 to agent1, line 1",
    "agent1: agent1 to agent0, line 2",
    "agent0: agent0 to agent1, line 3",
]


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.002) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = memory_stream_reply(rating="5", move="stay", talk="Yes", talk_lines=3)
        yield server


def test_a_talk_is_stored_in_both_streams_and_rows_and_replans_both(store, stub, tmp_path):
    run_id = start(store, tmp_path, minutes=60, steps=3)
    outcome = run_grid(store, run_id)
    assert outcome.status == "done", outcome.error
    calls = store.calls.for_conversation(run_id)
    talk = sorted(
        ((c["index"], c["agent"]) for c in calls if c["purpose"] == "memory_talk"),
    )
    assert talk == [(0, "agent0"), (1, "agent1"), (2, "agent0")]  # step 1, starter first
    assert {c["day"] for c in calls if c["purpose"] == "memory_talk"} == {1}
    # asked whether to talk at step 1 only: the pair then waits out the code's buffer (133
    # simulated minutes), so steps 2 and 3 ask whether to react instead
    decide = Counter((c["day"], c["agent"]) for c in calls if c["purpose"] == "memory_decide_talk")
    assert decide == {(1, "agent0"): 1, (1, "agent1"): 1}
    react = Counter((c["day"], c["agent"]) for c in calls if c["purpose"] == "memory_react")
    assert react == {(s, a): 1 for s in (2, 3) for a in ("agent0", "agent1")}
    assert outcome.counters["talks"] == 1 and outcome.counters["talk_fallbacks"] == 0
    for me, other in ((0, "agent1"), (1, "agent0")):
        stream = store.memories.stream(run_id, me)
        [chat] = [r for r in stream if r.text.startswith("Conversation with")]
        assert chat.type == "chat" and chat.created == 60
        assert chat.text == f"Conversation with {other}: " + " / ".join(LINES)
        nine = [
            r.text
            for r in stream
            if r.type == "plan" and r.text.startswith("09:") and r.text[5] == "-"
        ]
        assert nine[0] == f"09:00-09:01 talking with {other}"  # the code's length: 1 minute
        assert nine[1].startswith("09:01-09:16 ") and nine[-1].endswith(" task 4")
        assert nine[-1].startswith("09:46-10:00 ")
    rows = [r for r in store.grid_steps.for_run(run_id) if r["step"] == 1]
    talks = {r["agent"]: r["talks"] for r in rows}
    lines = [line.split(": ", 1) for line in LINES]
    assert talks == {
        "agent0": [{"with": "agent1", "started_by": "agent0", "lines": lines}],
        "agent1": [{"with": "agent0", "started_by": "agent0", "lines": lines}],
    }
    # the talk re-planned hour 9 at step 1: step 2 makes no new decomposition of it
    assert not [c for c in calls if c["purpose"] == "memory_plan_actions" and c["day"] == 2]


def test_talk_turns_bound_a_conversation_and_an_off_switch_stops_talk(store, stub, tmp_path):
    run_id = start(store, tmp_path, minutes=60, steps=1, talk_turns=2)
    assert run_grid(store, run_id).status == "done"
    [row] = [r for r in store.grid_steps.for_run(run_id) if r["agent"] == "agent0"]
    assert len(row["talks"][0]["lines"]) == 2
    quiet = start(store, tmp_path, minutes=60, steps=1, talk=False)
    assert run_grid(store, quiet).status == "done"
    purposes = Counter(c["purpose"] for c in store.calls.for_conversation(quiet))
    assert purposes["memory_decide_talk"] == 0 and purposes["memory_react"] == 2


def test_lines_not_in_the_asked_format_are_counted(store, stub, tmp_path):
    scripted = memory_stream_reply(rating="5", move="stay", talk="Yes")
    stub.reply_fn = lambda body: (
        "Nice to see you!" if "are chatting" in body["messages"][-1]["content"] else scripted(body)
    )
    run_id = start(store, tmp_path, minutes=60, steps=1, talk_turns=4)
    outcome = run_grid(store, run_id)
    assert outcome.counters["talk_fallbacks"] == 4  # never ends itself: talk_turns lines
    assert parse_utterance('{"utterance": "bye", "end": true}') == ("bye", True, False)


def _shape(store, run_id: str) -> dict:
    local = lambda i: i.split("-m", 1)[1]  # noqa: E731
    streams = [
        [
            (r.type, r.text, r.importance, [local(e) for e in r.evidence], r.created)
            for r in store.memories.stream(run_id, i)
        ]
        for i in range(2)
    ]
    rows = [
        (r["step"], r["agent"], r["move"], r.get("talks")) for r in store.grid_steps.for_run(run_id)
    ]
    done = [c for c in store.calls.for_conversation(run_id) if c["state"] == "done"]
    counters = store.conversations.get(run_id)["counters"]
    return {
        "streams": streams,
        "rows": rows,
        "prompts": sorted(c["prompt_hash"] for c in done),
        "counters": {name: counters[name] for name in COUNTERS},
    }


def test_a_run_cut_mid_talk_resumes_to_the_uninterrupted_run(embedded, stub, tmp_path):
    whole = start(embedded, tmp_path, minutes=30, steps=3)
    assert run_grid(embedded, whole).status == "done"
    expected = _shape(embedded, whole)
    calls = embedded.calls.for_conversation(whole)
    order = sorted(calls, key=lambda c: c.get("started_at", 0))
    talking = [n for n, c in enumerate(order) if c["purpose"] == "memory_talk"]
    assert talking and expected["counters"]["talks"] >= 1
    total = len(expected["prompts"])
    cuts = sorted({talking[0], talking[0] + 1, talking[-1], *range(4, total - 2, total // 6)})
    for cut_at in cuts:
        cut = start(embedded, tmp_path, minutes=30, steps=3)
        assert run_grid(embedded, cut, cancel_after=cut_at) is None, cut_at
        assert run_grid(embedded, cut).status == "done", cut_at
        assert _shape(embedded, cut) == expected, f"cut after {cut_at} of {total} calls"
        done = [c for c in embedded.calls.for_conversation(cut) if c["state"] == "done"]
        keys = Counter((c["purpose"], c["day"], c["index"], c["agent"]) for c in done)
        assert set(keys.values()) == {1}, cut_at
