"""The shipped paper design, run on the loopback stub, sends call by call what the reference tool
(autogen's GroupChat) sent: every other speaker's turn its own user message with the raw text and
the speaker in `name`, replies kept whole (bleed included), and each model's paper sampling.

The expected calls come from tests/fixtures/reference_prison/calls.json, written by a model of
autogen's message passing (see its README), not from this tool's output."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from simulator.domain.yaml_io import load_model
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.services.sweep_runs import SweepRunner
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.sweep import SweepSpec
from simulator.worlds.chat.services import runs as conv_service

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "prompts" / "experiments" / "prison_paper.yaml"
PAPER_SWEEP = REPO / "prompts" / "sweeps" / "prison_paper.yaml"
FIXTURE = json.loads((REPO / "tests/fixtures/reference_prison/calls.json").read_text("utf-8"))
CELL = {
    "Guard/Personality": "bad",
    "Prisoner/Personality": "bad",
    "Prisoner/Goal": "escape",
    "shared/Risks": "on",
    "shared/Research oversight": "on",
}
SAMPLING_KEYS = {"temperature", "top_p", "top_k", "seed", "max_tokens", "max_completion_tokens"}


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["llama3", "gpt-4.1"]) as server:
        turns: dict[str, int] = {}

        def reply(body: dict) -> str:  # the fixture's replies, in turn order, per model
            n = turns.get(body["model"], 0)
            turns[body["model"]] = n + 1
            replies = FIXTURE["replies"]
            return replies[n] if n < len(replies) else "The day's summary."  # then the summary

        server.reply_fn = reply
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        yield server


def run_paper_cell(store, models: list[str]):
    view = exp_service.import_yaml(store, PAPER, "alice")
    spec = load_model(PAPER_SWEEP, SweepSpec, "sweep")
    one = spec.model_copy(
        update={"variants": {}, "linked": [], "cells": [CELL], "llms": models, "repetitions": 1}
    )
    sweep, added = sweep_service.create(store, view, one, "alice")
    assert added == len(models)

    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait())
        try:
            return await SweepRunner(store, sweep["_id"], llms, poll_s=0.05).run()
        finally:
            await llms.aclose()

    progress = asyncio.run(go())
    errors = [c.get("error") for c in store.sweeps.conversations(sweep["_id"])]
    assert progress.done == len(models), errors
    assert progress.done == len(models) and progress.failed == 0
    return store.sweeps.conversations(sweep["_id"])


def expected_calls(conversation: dict) -> list[list[dict]]:
    """The fixture's calls with the system prompts this tool built for the agents."""
    systems = {}
    for call in conversation["_calls"]:
        systems.setdefault(call["agent"], call["messages"][0]["content"])
    out = []
    for call in FIXTURE["calls"]:
        messages = [dict(m) for m in call["messages"]]
        messages[0]["content"] = systems[call["speaker"]]
        out.append(messages)
    return out


def test_the_shipped_design_runs_the_reference_profile():
    spec = load_model(PAPER_SWEEP, SweepSpec, "sweep")
    assert (spec.reply_cleaning, spec.speaker_format, spec.seed) == ("none", "name_field", None)
    identity = spec.identity()
    assert identity["reply_cleaning"] == "none" and identity["speaker_format"] == "name_field"


def test_each_call_is_the_one_autogen_made(stub):
    store = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_reference"))
    try:
        conversations = run_paper_cell(store, ["ollama:llama3", "openai:gpt-4.1"])
        by_model = {}
        for conversation in conversations:
            calls = conv_service.prompts(store, conversation["_id"])  # the ledger, messages in
            turns = [c for c in calls if c["purpose"] == "agent_turn"]
            conversation["_calls"] = turns
            assert conversation["spec"]["reply_cleaning"] == "none"
            assert conversation["spec"]["speaker_format"] == "name_field"
            model = conversation["spec"]["role_llms"]["Guard"]["model"]
            by_model[model] = conversation
            expected = expected_calls(conversation)
            assert [c["agent"] for c in turns] == [c["speaker"] for c in FIXTURE["calls"]]
            sampling = FIXTURE["sampling"]["ollama" if "ollama" in model else model]
            assert all(c["params"] == sampling for c in turns)
            for got, want in zip(turns, expected, strict=True):
                assert got["messages"] == want  # the ledger: exactly what was sent
            messages = store.messages.for_conversation(conversation["_id"])
            assert [m["text"] for m in messages] == [r.strip() for r in FIXTURE["replies"]]
            assert not any(m["trimmed"] for m in messages)

        requests = {"llama3": [], "gpt-4.1": []}
        for request in stub.chat_requests:
            requests[request.body["model"].split(":")[0]].append(request.body)
        turns = len(FIXTURE["calls"])  # each model's agent turns, then the day's summary
        assert {model: len(bodies) for model, bodies in requests.items()} == {
            "llama3": turns + 1,
            "gpt-4.1": turns + 1,
        }
        # OpenAI: the messages on the wire, names included; no sampling parameter at all
        openai_bodies = requests["gpt-4.1"][:turns]
        assert [b["messages"] for b in openai_bodies] == expected_calls(by_model["openai:gpt-4.1"])
        assert all(not (SAMPLING_KEYS & set(b)) for b in openai_bodies)
        assert FIXTURE["sampling"]["openai:gpt-4.1"] == {}
        # Ollama: /api/chat has no `name` (its client drops it, as Ollama's OpenAI-compatible
        # endpoint the reference called ignored it); the texts and roles are the reference's
        ollama_bodies = requests["llama3"][:turns]
        unnamed = [
            [{k: v for k, v in m.items() if k != "name"} for m in call]
            for call in expected_calls(by_model["ollama:llama3"])
        ]
        assert [b["messages"] for b in ollama_bodies] == unnamed
        assert all(b["options"] == FIXTURE["sampling"]["ollama"] for b in ollama_bodies)
    finally:
        store.close()


def test_sweep_create_prints_the_switches_and_flags_set_them(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice"}
    exp_id = run_cli(["experiment", "import", str(PAPER), "--json"], env=env).json()["id"]
    shipped = run_cli(["sweep", "create", exp_id, str(PAPER_SWEEP), "--dry-run"], env=env)
    assert shipped.code == 0, shipped.err
    assert "profile: reference" in shipped.out and "speaker_format: name_field" in shipped.out
    base = ["sweep", "create", exp_id, str(PAPER_SWEEP), "--dry-run", "--json"]
    plan = run_cli(base, env=env).json()
    assert plan["switches"] == {"reply_cleaning": "none", "speaker_format": "name_field"}
    flagged = run_cli([*base, "--profile", "default", "--reply-cleaning", "none"], env=env).json()
    assert flagged["switches"] == {"reply_cleaning": "none", "speaker_format": "prefix"}
    grid = REPO / "prompts" / "experiments" / "takata_grid.yaml"
    grid_id = run_cli(["experiment", "import", str(grid), "--json"], env=env).json()["id"]
    refused = run_cli(["sweep", "create", grid_id, "--speaker-format", "name_field"], env=env)
    assert refused.code == 2 and "--speaker-format" in refused.err
