"""The call ledger through the group commit: a request leaves only once its row is stored, a
call's outcome is stored with the run's next write (its message), and a call cancelled while its
row is still queued ends up "cancelled" on record, never in flight."""

from __future__ import annotations

import asyncio

from simulator.domain.params import GenerationParams
from simulator.engine.recorder import StoreRecorder
from simulator.llm.base import Completion
from simulator.llm.retry import PoolRegistry
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.store import open_store_uri
from simulator.worlds.chat.services import runs as conv_service


class _Backend:
    """Notes whether the ledger row was stored when the request left, then waits."""

    model = "mock:slow"
    endpoint = "mock"

    def __init__(self, store, conversation_id: str, wait_s: float) -> None:
        self._store, self._conversation_id, self._wait_s = store, conversation_id, wait_s
        self.rows_at_send: list[str] = []

    async def chat(self, messages, params) -> Completion:
        rows = self._store.calls.for_conversation(self._conversation_id)
        self.rows_at_send.extend(row["state"] for row in rows)
        await asyncio.sleep(self._wait_s)
        return Completion(text="hello", tokens_in=3, tokens_out=1, latency_s=self._wait_s)

    async def aclose(self) -> None:
        return None


def _setup(tmp_path, prison_path):
    store = open_store_uri(str(tmp_path / "store"))
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = conv_service.build_spec(view, agents="guard=1,prisoner=1", total_messages=2,
                                   llm="mock:a")  # fmt: skip
    conversation = run_service.create_run(store, view, spec, "alice")
    return store, spec, conversation["_id"]


def _call(recorder, spec, backend):
    ledger = recorder.call_recorder(
        "agent_turn", 1, 0, "Guard_1", spec.role_llms["Guard"],
        [{"role": "user", "content": "x"}], GenerationParams(),
    )  # fmt: skip
    resilient = PoolRegistry().wrap(backend)
    return resilient.chat([{"role": "user", "content": "x"}], GenerationParams(), ledger)


def test_the_request_leaves_after_its_row_and_prompt_are_stored(tmp_path, prison_path):
    store, spec, conversation_id = _setup(tmp_path, prison_path)
    backend = _Backend(store, conversation_id, wait_s=0.01)
    recorder = StoreRecorder(store, conversation_id)

    async def call_then_mark() -> None:
        await _call(recorder, spec, backend)
        recorder.mark("running")  # as a run's status writes: what is queued goes first

    asyncio.run(call_then_mark())
    assert backend.rows_at_send == ["in_flight"]
    (row,) = store.calls.for_conversation(conversation_id)
    assert row["state"] == "done" and row["response"] == "hello"
    assert store.calls.prompt(row["prompt_hash"]) == [{"role": "user", "content": "x"}]
    store.close()


def test_the_outcome_and_the_message_go_out_in_one_flush(tmp_path, prison_path):
    """A turn waits for two flushes (the row before the request, then the outcome with the
    message), not three; the message is never stored before its row is complete."""
    store, spec, conversation_id = _setup(tmp_path, prison_path)
    backend = _Backend(store, conversation_id, wait_s=0.01)
    recorder = StoreRecorder(store, conversation_id)
    seen: dict[str, object] = {}

    async def turns() -> None:
        writes = recorder.writes()
        for index in range(2):  # the first message also writes the progress counters
            before = writes.stats.flushes
            await _call(recorder, spec, backend)
            rows = store.calls.for_conversation(conversation_id)
            seen[f"state before message {index}"] = rows[-1]["state"]  # queued, not stored
            message = {"day": 1, "index": index, "seq": index, "speaker": "Guard_1"}
            await recorder.record_message({**message, "text": f"hello {index}"})
            seen[f"flushes of turn {index}"] = writes.stats.flushes - before

    asyncio.run(turns())
    assert seen == {
        "state before message 0": "in_flight",
        "flushes of turn 0": 3,
        "state before message 1": "in_flight",
        "flushes of turn 1": 2,
    }
    rows = store.calls.for_conversation(conversation_id)
    assert [(r["state"], r["response"]) for r in rows] == [("done", "hello")] * 2
    texts = [m["text"] for m in store.messages.for_conversation(conversation_id)]
    assert texts == ["hello 0", "hello 1"]
    store.close()


def test_a_call_cancelled_while_its_row_is_queued_is_recorded_cancelled(tmp_path, prison_path):
    store, spec, conversation_id = _setup(tmp_path, prison_path)
    backend = _Backend(store, conversation_id, wait_s=60)
    recorder = StoreRecorder(store, conversation_id)

    async def cancel_at_once() -> None:
        task = asyncio.ensure_future(_call(recorder, spec, backend))
        await asyncio.sleep(0)  # the row is queued, not yet flushed
        assert store.calls.for_conversation(conversation_id) == []
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        recorder.mark("interrupted", "stopped by the user")  # flushes what is queued first

    asyncio.run(cancel_at_once())
    assert backend.rows_at_send == []  # the request never left
    (row,) = store.calls.for_conversation(conversation_id)
    assert row["state"] == "failed" and row["error_kind"] == "cancelled"
    assert recorder.counters["calls"] == 1
    store.close()
