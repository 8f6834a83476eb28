"""Stopping mid-conversation keeps every message; running it again continues exactly."""

from __future__ import annotations

import asyncio

import pytest

from simulator.engine import events as ev
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.worlds.chat.services import runs as conv_service


def test_stop_after_current_turn_then_resume(store, prison_path):
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = conv_service.build_spec(
        view,
        agents="guard=1,prisoner=2",
        total_messages=8,
        days=2,
        speaker="random",
        llm="mock:x",
        seed=5,
    )
    doc = run_service.create_run(store, view, spec, "alice")
    stop = asyncio.Event()

    def stop_after_three(event):
        if isinstance(event, ev.MessageStored) and event.day == 1 and event.index == 2:
            stop.set()

    async def go(**kw):
        llms = LLMAccess(policy=RetryPolicy.no_wait())
        try:
            return await conv_service.run(store, doc["_id"], llms, **kw)
        finally:
            await llms.aclose()

    first = asyncio.run(go(on_event=stop_after_three, stop=stop))
    assert first.status == "interrupted"
    assert store.conversations.get(doc["_id"])["status"] == "interrupted"
    kept = [m["speaker"] for m in store.messages.for_conversation(doc["_id"])]
    assert len(kept) == 3

    second = asyncio.run(go())
    assert second.status == "done"
    messages = store.messages.for_conversation(doc["_id"])
    assert [m["seq"] for m in messages] == list(range(8))
    assert [m["speaker"] for m in messages][:3] == kept

    # the same seed without interruption picks the same speakers
    fresh = run_service.create_run(store, view, spec, "alice")
    doc = fresh
    asyncio.run(go())
    assert [m["speaker"] for m in store.messages.for_conversation(fresh["_id"])] == [
        m["speaker"] for m in messages
    ]


def test_resume_replays_a_finished_call_whose_message_was_never_stored(
    store, prison_path, monkeypatch
):
    """A kill between a call's ledger row and its message: the resumed chat takes the answer
    from the ledger (the step loop's replay) instead of asking the model again."""
    from simulator.engine.recorder import StoreRecorder

    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = conv_service.build_spec(
        view, agents="guard=1,prisoner=2", total_messages=6, days=1, llm="mock:x", seed=9
    )
    doc = run_service.create_run(store, view, spec, "alice")
    real_record = StoreRecorder.record_message

    async def killed_at_third(self, message):
        if message["index"] == 2:
            raise asyncio.CancelledError  # the process dies after the call, before the insert
        await real_record(self, message)

    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait())
        try:
            return await conv_service.run(store, doc["_id"], llms)
        finally:
            await llms.aclose()

    monkeypatch.setattr(StoreRecorder, "record_message", killed_at_third)
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
    assert store.conversations.get(doc["_id"])["status"] == "interrupted"
    assert len(store.messages.for_conversation(doc["_id"])) == 2
    answered = [c for c in store.calls.for_conversation(doc["_id"]) if c["index"] == 2]
    assert [c["state"] for c in answered] == ["done"]

    monkeypatch.setattr(StoreRecorder, "record_message", real_record)
    assert asyncio.run(go()).status == "done"
    calls = store.calls.for_conversation(doc["_id"])
    places = [(c["purpose"], c["day"], c["index"]) for c in calls if c["purpose"] != "summary"]
    assert len(places) == len(set(places)) == 6  # every turn asked once, the third included
    third = store.messages.for_conversation(doc["_id"])[2]
    assert third["raw_text"] == answered[0]["response"]
    assert store.conversations.get(doc["_id"])["counters"]["replayed_calls"] == 1
