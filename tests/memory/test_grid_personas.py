"""Personas in the grid: `{identity}` reaches every prompt, the seed memories are the stream's
first records (rated at step 0) or the summary memory's first text, and a persona count that
does not match the agents is refused before anything is stored."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML, run_grid

from simulator.errors import UserError
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.grid.services import runs as grid_runs

PERSONAS = [
    {"identity": "Isa runs the cafe.", "memories": ["I will host a party at step 3."]},
    {"identity": "Tom is a student.", "memories": []},
]


@pytest.fixture
def stub(monkeypatch):
    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if prompt.endswith("Rating:"):
            return "9" if "party" in prompt else "3"
        if "Choose your next move" in prompt:
            return "stay"
        return "hi"

    with StubLLMServer(models=["stub"], latency_s=0.01) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = reply
        yield server


def _view(store, tmp_path, memory: dict, personas=PERSONAS, agents: int = 2):
    doc = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
    doc["memory"] = memory
    doc["personas"] = personas
    doc["world"]["agents"] = agents
    doc["prompts"]["message"] = "{identity}\n" + doc["prompts"]["message"]
    path = tmp_path / "personas.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return exp_service.import_yaml(store, path, "alice")


def _prompts(store, run_id, purpose):
    calls = [c for c in store.calls.for_conversation(run_id) if c["purpose"] == purpose]
    return [store.calls.prompt(c["prompt_hash"])[-1]["content"] for c in calls]


def test_seed_memories_are_the_streams_first_records_and_identity_reaches_the_prompt(
    store, stub, tmp_path
):
    view = _view(
        store,
        tmp_path,
        {"kind": "stream", "embedder": "mock:16", "reflection": False, "planning": False},
    )
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world={"steps": 1})
    run_id = run_service.create_run(store, view, spec, "alice")["_id"]
    assert run_grid(store, run_id).status == "done"
    first = store.memories.stream(run_id, 0)[0]
    assert (first.text, first.type, first.created, first.importance) == (
        "I will host a party at step 3.",
        "observation",
        0,
        9,
    )
    ratings = [
        c for c in store.calls.for_conversation(run_id) if c["purpose"] == "memory_importance"
    ]
    assert Counter(c["day"] for c in ratings)[0] == 1  # one seed memory, rated at step 0
    messages = _prompts(store, run_id, "grid_message")
    assert any(p.startswith("Isa runs the cafe.") and "host a party" in p for p in messages)
    assert any(p.startswith("Tom is a student.") for p in messages)


def test_the_summary_memory_starts_from_the_seed_memories(store, stub, tmp_path):
    view = _view(store, tmp_path, {"kind": "summary"})
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world={"steps": 1})
    run_id = run_service.create_run(store, view, spec, "alice")["_id"]
    assert run_grid(store, run_id).status == "done"
    summaries = _prompts(store, run_id, "grid_memory")
    assert any("I will host a party at step 3." in p for p in summaries)
    assert any("no memory" in p for p in summaries)  # Tom has none: the world's initial memory


def test_a_persona_count_that_does_not_match_is_refused(store, tmp_path):
    with pytest.raises(UserError, match="personas"):
        _view(store, tmp_path, {"kind": "summary"}, agents=3)
    view = _view(store, tmp_path, {"kind": "summary"})
    before = store.db.conversations.count_documents({})
    with pytest.raises(UserError, match="2 personas, and 4 agents"):
        grid_runs.build_spec(view, llm="openai:stub", seed=1, world={"agents": 4})
    assert store.db.conversations.count_documents({}) == before
