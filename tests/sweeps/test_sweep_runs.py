"""Sweeps end to end on the real store: re-runs skip what is done, faults are retried and
recorded, and the sweep finishes."""

from __future__ import annotations

import asyncio

import pytest

from simulator.llm.access import LLMAccess
from simulator.llm.retry import PoolRegistry, RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.services.sweep_runs import SweepRunner
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.sweep import SweepSpec


def run_sweep(store, sweep_id, llms, **kw):
    async def go():
        try:
            return await SweepRunner(store, sweep_id, llms, poll_s=0.05, **kw).run()
        finally:
            await llms.aclose()

    return asyncio.run(go())


def test_rerunning_the_same_sweep_skips_what_is_done(store, prison_path):
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=4,
        agents={"Guard": 2, "Prisoner": 1},
        every_agent_combination=True,
        llms=["mock:a"],
        repetitions=2,
        variants={"Prisoner/Goal": "all"},
        seed=3,
    )
    sweep, added = sweep_service.create(store, view, spec, "alice")
    assert added == 2 * 2 * 2
    progress = run_sweep(
        store, sweep["_id"], LLMAccess(policy=RetryPolicy.no_wait()), concurrency=4
    )
    assert progress.done == 8 and progress.failed == 0
    messages = store.db.messages.count_documents({})

    again, added_again = sweep_service.create(store, view, spec, "alice")
    assert again["_id"] == sweep["_id"] and added_again == 0
    assert sweep_service.plan(store, view, spec, "alice").already_stored == 8
    progress = run_sweep(store, sweep["_id"], LLMAccess(policy=RetryPolicy.no_wait()))
    assert progress.calls == 0
    assert store.db.messages.count_documents({}) == messages

    bigger = spec.model_copy(update={"repetitions": 3})
    _, added_more = sweep_service.create(store, view, bigger, "alice")
    assert added_more == 4  # only the third repetition of each cell is new


@pytest.fixture
def faulty_stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.005) as server:
        server.fault_rate = 0.2
        server.fault_kinds = ("429", "500", "timeout", "drop", "malformed")
        server.enqueue_faults(
            "429", "500", "timeout", "drop", "malformed"
        )  # each kind at least once
        server.retry_after_s = 0.05
        server.timeout_sleep_s = 1.0
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        yield server


def test_twenty_percent_faults_are_retried_and_recorded(tmp_path, faulty_stub, prison_path):
    from simulator.store.store import open_store_uri

    store = open_store_uri(str(tmp_path / "store"))
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=6, agents={"Guard": 1, "Prisoner": 1}, llms=["openai:stub"], repetitions=12
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    policy = RetryPolicy(max_attempts=4, initial_wait_s=0.01, max_wait_s=0.05)

    def access():
        return LLMAccess(pools=PoolRegistry(sizes={"openai": 8}), policy=policy, timeout_s=0.5)

    run_sweep(store, sweep["_id"], access(), concurrency=6)
    status = sweep_service.status(store, sweep["_id"])
    for failed in status["failed"]:
        assert failed["error"]  # a conversation that still failed says why; the sweep went on
    for _ in range(3):
        if status["complete"]:
            break
        store.sweeps.reset_failed(sweep["_id"])
        run_sweep(store, sweep["_id"], access(), concurrency=6)
        status = sweep_service.status(store, sweep["_id"])
    assert status["complete"], status
    kinds = {c["error_kind"] for c in store.db.calls.find({"error": {"$ne": None}})}
    assert {"rate_limit", "transient"} <= kinds
    errors = " ".join(c["error"] for c in store.db.calls.find({"error": {"$ne": None}}))
    for text in (
        "rate limiting",
        "server error",
        "sent no answer within",  # a timeout is told apart from a dropped connection
        "malformed",
        "closed the connection before answering",
    ):
        assert text in errors
    for conv in store.sweeps.conversations(sweep["_id"]):
        seqs = [m["seq"] for m in store.messages.for_conversation(conv["_id"])]
        assert seqs == list(range(6))
