"""A 2-guard/1-prisoner, 2-day conversation with a different model per role, over real clients.

The stub speaks both the OpenAI and the Ollama protocol on loopback; replies are scripted per
model, with role bleed, wrong manager picks, a 429 and a 500 thrown in.
"""

from __future__ import annotations

import asyncio

import pytest

from simulator.domain.yaml_io import load_model
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.services import runs as conv_service

LLMS = [
    {
        "model": "openai:guard-llm",
        "params": {
            "temperature": 0.3,
            "top_p": 0.8,
            "top_k": 5,
            "seed": 11,
            "max_tokens": 60,
            "stop": ["###"],
        },
    },
    {
        "model": "ollama:prisoner-llm",
        "params": {"temperature": 0.5, "top_k": 7, "max_tokens": 50, "num_ctx": 2048, "seed": 3},
    },
    {"model": "openai:manager-llm", "params": {"temperature": 0.0}},
    {"model": "ollama:summary-llm", "params": {"temperature": 0.2}},
]


def scripted_replies():
    manager_calls = {"n": 0}
    order = ["Guard_1", "Prisoner_1", "Guard_2", "Prisoner_1"]

    def reply(body: dict) -> str:
        model = body["model"]
        if model.startswith("guard-llm"):
            return "Guard_1: Stay in line.\nPrisoner_1: I refuse!"
        if model.startswith("prisoner-llm"):
            return "I want an extra hour of yard time."
        if model.startswith("manager-llm"):
            manager_calls["n"] += 1
            n = manager_calls["n"]
            if n == 1:
                return "Nobody should talk."  # names no agent -> feedback
            if n == 2:
                return "Guard_1 and Prisoner_1"  # names several -> feedback
            if n == 3:
                return "Still unsure."  # third failure -> round robin fallback
            return f"{order[(n - 4) % len(order)]}"
        if model.startswith("summary-llm"):
            return "The guards kept order; the prisoner asked for yard time."
        raise AssertionError(model)

    return reply


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(
        models=["prisoner-llm", "summary-llm", "guard-llm", "manager-llm"]
    ) as server:
        server.reply_fn = scripted_replies()
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        yield server


def test_mixed_model_conversation_is_stored_whole(store, stub, prison_path):
    prison = load_model(prison_path, Experiment, "experiment")
    experiment = Experiment.model_validate({**prison.model_dump(), "llms": LLMS})
    view = exp_service.create(store, experiment, "alice")
    spec = conv_service.build_spec(
        view,
        agents="guard=2,prisoner=1",
        total_messages=8,
        days=2,
        speaker="auto",
        llm_for=("guard=openai:guard-llm", "prisoner=ollama:prisoner-llm"),
        manager_llm="openai:manager-llm",
        summarizer_llm="ollama:summary-llm",
    )
    stub.enqueue_faults("429", "500")
    llms = LLMAccess(policy=RetryPolicy.no_wait())

    async def go():
        await run_service.preflight("chat", spec, llms)
        doc = run_service.create_run(store, view, spec, "alice")
        try:
            return await conv_service.run(store, doc["_id"], llms)
        finally:
            await llms.aclose()

    outcome = asyncio.run(go())
    assert outcome.status == "done", outcome.error
    data = conv_service.transcript(store, outcome.conversation_id)
    conv, messages, summaries = data["conversation"], data["messages"], data["summaries"]

    assert [a["name"] for a in conv["agents"]] == ["Guard_1", "Guard_2", "Prisoner_1"]
    assert conv["day_split"] == [4, 4]
    assert [(m["day"], m["index"]) for m in messages] == [(1, i) for i in range(4)] + [
        (2, i) for i in range(4)
    ]
    assert messages[0]["speaker_fallback"] and messages[0]["speaker"] == "Guard_1"
    assert not any(m["speaker_fallback"] for m in messages[1:])
    guard_messages = [m for m in messages if m["role"] == "Guard"]
    assert guard_messages and all(
        m["text"] == "Stay in line." and m["trimmed"] for m in guard_messages
    )
    assert all("I refuse!" in m["raw_text"] for m in guard_messages)
    assert {m["model"] for m in messages} == {"openai:guard-llm", "ollama:prisoner-llm"}
    assert len(summaries) == 2 and conv["summaries"][1]["day"] == 2
    assert conv["counters"]["messages"] == 8 and conv["counters"]["fallbacks"] == 1

    calls = conv_service.prompts(store, outcome.conversation_id)
    purposes = {c["purpose"] for c in calls}
    assert purposes == {"agent_turn", "manager_pick", "summary"}
    failed = [c for c in calls if c["error"]]
    assert {c["error_kind"] for c in failed} == {"rate_limit", "transient"}
    assert all(c["model_identity"] for c in calls if not c["error"])

    # the ledger re-renders exactly what the servers received
    sent = [r.body["messages"] for r in stub.chat_requests]
    for call in calls:
        assert call["messages"] in sent
    day2_first = next(c for c in calls if c["purpose"] == "agent_turn" and c["day"] == 2)
    assert "Day 1 summary:\nThe guards kept order" in day2_first["messages"][1]["content"]

    # sampling parameters reached each backend
    openai_guard = next(r.body for r in stub.chat_requests if r.body["model"] == "guard-llm")
    assert (openai_guard["temperature"], openai_guard["top_p"], openai_guard["seed"]) == (
        0.3,
        0.8,
        11,
    )
    assert (
        openai_guard["max_tokens"] == 60
        and openai_guard["stop"] == ["###"]
        and openai_guard["top_k"] == 5
    )
    ollama_prisoner = next(
        r.body for r in stub.chat_requests if r.body["model"].startswith("prisoner-llm")
    )
    options = ollama_prisoner["options"]
    assert options["temperature"] == 0.5 and options["top_k"] == 7 and options["num_predict"] == 50
    assert options["num_ctx"] == 2048 and options["seed"] == 3
