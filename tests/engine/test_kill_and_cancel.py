"""The ledger and the status survive what users do to a run: Ctrl-C cancels the request in flight
at once, kill -9 leaves the call on record, and a takeover never reuses a ledger `seq`."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import pytest
from process_waits import cli

from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.worlds.chat.services import runs as conv_service

REPO = Path(__file__).resolve().parents[2]
SLOW_S = 120.0  # far longer than any wait below: the run must not wait for the reply


def _start_run(db: str, exp_id: str, stub: StubLLMServer) -> subprocess.Popen:
    chat = ("--agents", "guard=1,prisoner=1", "--messages", "4", "--llm", "openai:stub")
    return cli(db, stub, "run", exp_id, *chat)


def _wait_for_chat(stub: StubLLMServer, proc: subprocess.Popen, count: int = 1) -> None:
    deadline = time.monotonic() + 120
    while len(stub.chat_requests) < count:
        if proc.poll() is not None:
            pytest.fail(f"the run ended early: {proc.communicate()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the run sent no chat request")
        time.sleep(0.05)


@pytest.fixture
def setup(tmp_path, prison_path):
    db = str(tmp_path / "store")
    store = open_store_uri(db)
    exp_id = exp_service.import_yaml(store, prison_path, "alice").id
    store.close()
    with StubLLMServer(models=["stub"]) as stub:
        yield db, exp_id, stub


def _only_conversation(db: str):
    store = open_store_uri(db)
    [doc] = store.conversations.list()
    calls = store.calls.for_conversation(doc["_id"])
    store.close()
    return doc, calls


def test_ctrl_c_cancels_the_request_in_flight_and_exits_at_once(setup):
    db, exp_id, stub = setup
    stub.latency_s = SLOW_S
    proc = _start_run(db, exp_id, stub)
    _wait_for_chat(stub, proc)
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        _out, err = proc.communicate(timeout=SLOW_S / 2)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("Ctrl-C waited for the reply")
    print(f"exit {time.monotonic() - sent:.2f} s after Ctrl-C")
    assert proc.returncode == 130, err
    assert "Stopping: cancelling the request in flight" in err
    doc, calls = _only_conversation(db)
    assert doc["status"] == "interrupted"
    [call] = calls
    assert call["error_kind"] == "cancelled" and call["response"] is None
    assert call["state"] == "failed"


def test_kill_9_leaves_the_call_in_flight_on_record(setup):
    db, exp_id, stub = setup
    stub.latency_s = SLOW_S
    proc = _start_run(db, exp_id, stub)
    _wait_for_chat(stub, proc)
    proc.kill()
    proc.wait(timeout=60)
    doc, calls = _only_conversation(db)
    assert doc["status"] == "running"  # what a crash leaves; sweeps resume such conversations
    assert len(calls) == len(stub.chat_requests)  # before: the call in flight was missing
    assert calls[-1]["state"] == "in_flight" and calls[-1]["response"] is None
    assert [c["seq"] for c in calls] == list(range(1, len(calls) + 1))


def test_a_takeover_never_reuses_a_ledger_seq(tmp_path, prison_path):
    """Two runs of one conversation (a worker that lost its lease, and the one that took over)
    each believe they own the next seq; the ledger gives each row its own."""
    from simulator.domain.params import GenerationParams
    from simulator.engine.recorder import StoreRecorder
    from simulator.llm.retry import Attempt, _utc_now_ms

    store = open_store_uri(str(tmp_path / "store"))
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = conv_service.build_spec(view, agents="guard=1,prisoner=1", total_messages=2,
                                   llm="mock:a")  # fmt: skip
    conv = run_service.create_run(store, view, spec, "alice")
    old, new = StoreRecorder(store, conv["_id"]), StoreRecorder(store, conv["_id"])
    old.load_progress()
    new.load_progress()
    choice = spec.role_llms["Guard"]

    async def four_calls() -> None:
        for recorder in (old, new, old, new):
            ledger = recorder.call_recorder(
                "agent_turn", 1, 0, "Guard_1", choice, [{"role": "user", "content": "x"}],
                GenerationParams(),
            )  # fmt: skip
            await ledger.begin(1, _utc_now_ms())
            await ledger(Attempt(1, None, "boom", "transient", 0.01, _utc_now_ms()))

    asyncio.run(four_calls())
    seqs = [c["seq"] for c in store.calls.for_conversation(conv["_id"])]
    assert sorted(seqs) == [1, 2, 3, 4]  # before: 1, 1, 2, 2
    store.close()
