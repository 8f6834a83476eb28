"""Grid runs through the real openai client over loopback: the spec's arithmetic check, all
actors of a stage at once, broadcast delivery, and a failed run resumed with no call repeated."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from grid_helpers import grid_view, run_grid, scripted

from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.grid.services import runs as grid_runs


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.02) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = scripted("x+1")
        yield server


def _run(store, run_id, **kw):
    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        try:
            return await grid_runs.run(store, run_id, llms, **kw)
        finally:
            await llms.aclose()

    return asyncio.run(go())


def test_always_x_plus_1_ends_where_arithmetic_says(store, stub):
    view = grid_view(store)
    spec = grid_runs.build_spec(
        view, llm="openai:stub", seed=5, world={"agents": 10, "steps": 5, "radius": 25}
    )
    run = run_service.create_run(store, view, spec, "alice")
    outcome = _run(store, run["_id"])
    assert outcome.status == "done", outcome.error
    rows = store.grid_steps.for_run(run["_id"])
    assert len(rows) == 50
    last = [r for r in rows if r["step"] == 5]
    for start, row in zip(spec.start, last, strict=True):
        assert row["position_after"] == [(start[0] + 5) % 50, start[1]]
        assert row["move"] == "x+1" and not row["move_fallback"]
    # radius 25 on 50 x 50 is a broadcast: everyone hears the nine others every step
    assert all(len(r["heard_from"]) == 9 and len(r["recipients"]) == 9 for r in rows)
    assert rows[0]["received"].count("#together") == 9
    assert outcome.counters["calls"] == 150 and outcome.counters["move_fallbacks"] == 0
    # all ten agents of a stage were in flight together
    assert stub.max_in_flight == 10
    purposes = Counter(c["purpose"] for c in store.calls.for_conversation(run["_id"]))
    assert purposes == {"grid_message": 50, "grid_memory": 50, "grid_move": 50}


def test_a_move_naming_no_command_stays_and_is_counted(store, stub):
    stub.reply_fn = scripted("north")
    view = grid_view(store)
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world={"agents": 3, "steps": 2})
    run = run_service.create_run(store, view, spec, "alice")
    outcome = _run(store, run["_id"])
    rows = store.grid_steps.for_run(run["_id"])
    assert all(r["move"] == "stay" and r["move_fallback"] for r in rows)
    assert all(r["move_reply"] == "I pick north now" for r in rows)
    assert [r["position_after"] for r in rows[-3:]] == [list(p) for p in spec.start]
    assert outcome.counters["move_fallbacks"] == 6
    assert store.conversations.get(run["_id"])["counters"]["move_fallbacks"] == 6


def test_an_interrupted_step_resumes_without_repeating_a_stored_call(store, stub):
    view = grid_view(store)
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=2, world={"agents": 4, "steps": 3})
    run = run_service.create_run(store, view, spec, "alice")
    stub.reply_fn = scripted("y+1")
    first = _interrupt_after(store, run["_id"], finished_calls=18)  # inside step 2's memory stage
    assert first == "interrupted"
    assert store.conversations.get(run["_id"])["status"] == "interrupted"
    assert {r["step"] for r in store.grid_steps.for_run(run["_id"])} == {1}
    done_before = sum(c["state"] == "done" for c in store.calls.for_conversation(run["_id"]))
    assert done_before >= 18
    sent_before = len(stub.chat_requests)
    second = _run(store, run["_id"])
    assert second.status == "done", second.error
    replayed = second.counters["replayed_calls"]
    assert replayed == done_before - 12  # step 2's finished calls were not sent again
    assert len(stub.chat_requests) - sent_before == 3 * 4 * 3 - done_before
    calls = store.calls.for_conversation(run["_id"])
    done = Counter((c["purpose"], c["day"], c["agent"]) for c in calls if c["state"] == "done")
    assert len(done) == 36 and set(done.values()) == {1}  # each answered exactly once
    rows = store.grid_steps.for_run(run["_id"])
    assert len(rows) == 12
    for start, row in zip(spec.start, rows[-4:], strict=True):
        assert row["position_after"] == [start[0], (start[1] + 3) % 50]


def _interrupt_after(store, run_id, finished_calls: int) -> str:
    """Run, and cancel the run (as Ctrl-C does) once `finished_calls` calls have finished."""
    assert run_grid(store, run_id, cancel_after=finished_calls) is None
    return store.conversations.get(run_id)["status"]
