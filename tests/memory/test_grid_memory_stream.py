"""The memory stream as the grid's memory, through the real openai client over loopback and the
real store: what each agent heard becomes rated, embedded records; reflections store thoughts
citing their evidence; the move prompt shows what was retrieved, and each row says which
records; a run cancelled mid-step resumes to the same stream without rating anything twice."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML, run_grid

from simulator.errors import UserError
from simulator.memory.testing.replies import memory_stream_reply
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.grid.services import runs as grid_runs

STREAM = {
    "kind": "stream",
    "embedder": "mock:16",
    "reflection_threshold": 20,
    "top_k": 4,
    "planning": False,
}


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.01) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = memory_stream_reply()
        yield server


def _view(store, tmp_path, memory: dict):
    doc = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
    doc["memory"] = memory
    path = tmp_path / "grid_memory.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return exp_service.import_yaml(store, path, "alice")


def _start(store, tmp_path, memory: dict, steps: int = 3):
    view = _view(store, tmp_path, memory)
    world = {"agents": 3, "steps": steps, "radius": 25}
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=3, world=world)
    return spec, run_service.create_run(store, view, spec, "alice")["_id"]


def _streams(store, run_id) -> list[list[tuple]]:
    return [
        [
            (r.id, r.type, r.text, r.importance, r.evidence, r.depth)
            for r in store.memories.stream(run_id, i)
        ]
        for i in range(3)
    ]


def test_heard_messages_become_records_and_reflections_cite_them(store, stub, tmp_path):
    spec, run_id = _start(store, tmp_path, STREAM)
    assert "memory.retrieval: paper (not given)" in spec.defaults_applied
    assert spec.memory.minutes_per_step == 10 and spec.calls == 18  # message and move only
    outcome = run_grid(store, run_id)
    assert outcome.status == "done", outcome.error
    purposes = Counter(c["purpose"] for c in store.calls.for_conversation(run_id))
    # a step: 3 chats per agent (its own and two heard), 7 each: 21 >= 20, one reflection
    # (2 questions, 2 insights each: 4 thoughts, each rated)
    assert purposes == {
        "grid_message": 9,
        "grid_move": 9,
        "memory_importance": 9 * 3 + 9 * 4,
        "memory_questions": 9,
        "memory_insights": 18,
    }
    assert "grid_memory" not in purposes
    assert outcome.counters["reflections"] == 9 and outcome.counters["importance_fallbacks"] == 0
    stream = store.memories.stream(run_id, 0)
    chats = [r for r in stream if r.type == "observation"]  # what it said and heard
    thoughts = [r for r in stream if r.type == "thought"]
    assert len(chats) == 9 and len(thoughts) == 12
    assert [r.text for r in chats[:3]] == [
        "I said: hello from agent0",
        "agent1 said: hello from agent1",
        "agent2 said: hello from agent2",
    ]
    assert all(r.importance == 7 and r.created == 10 * (1 + i // 3) for i, r in enumerate(chats))
    ids = {r.id for r in stream}
    first_thought = thoughts[0]
    assert first_thought.text == "People greet each other" and first_thought.depth == 1
    assert len(first_thought.evidence) == 2 and set(first_thought.evidence) <= ids
    rows = store.grid_steps.for_run(run_id)
    assert len(rows) == 9
    for row in rows:
        assert row["retrieved"] and set(row["retrieved"]) <= {
            r.id for r in store.memories.stream(run_id, row["agent_index"])
        }
        assert row["memory"].startswith("- ")  # the move prompt's {memory}: retrieved records
    # what the model was sent: the move prompt shows the records the row names
    moves = [c for c in store.calls.for_conversation(run_id) if c["purpose"] == "grid_move"]
    last = next(c for c in moves if c["day"] == 3 and c["agent"] == "agent0")
    sent = store.calls.prompt(last["prompt_hash"])[-1]["content"]
    row = next(r for r in rows if r["step"] == 3 and r["agent_index"] == 0)
    assert row["memory"] in sent
    texts = {r.id: r.text for r in stream}
    assert all(f"- {texts[i]}" in sent for i in row["retrieved"][-4:])


def test_a_run_cancelled_mid_step_resumes_to_the_same_stream_rating_nothing_twice(
    store, stub, tmp_path
):
    _, whole = _start(store, tmp_path, STREAM)
    assert run_grid(store, whole).status == "done"
    _, cut = _start(store, tmp_path, STREAM)
    # step 1 is 36 calls; 51 is inside step 2's reflection: its chats are stored, its row not
    assert run_grid(store, cut, cancel_after=51) is None
    assert store.conversations.get(cut)["status"] == "interrupted"
    assert {r["step"] for r in store.grid_steps.for_run(cut)} == {1}
    assert any(r.created == 20 for r in store.memories.stream(cut, 0))
    assert run_grid(store, cut).status == "done"

    def shape(run_id):  # ids without the run's own prefix
        return [
            [
                (k, text, imp, [e.split("-m")[1] for e in ev], depth)
                for _, k, text, imp, ev, depth in agent
            ]
            for agent in _streams(store, run_id)
        ]

    assert shape(cut) == shape(whole)
    calls = [c for c in store.calls.for_conversation(cut) if c["state"] == "done"]
    answered = Counter((c["purpose"], c["day"], c["index"], c["agent"]) for c in calls)
    assert set(answered.values()) == {1}  # nothing answered twice, ratings included
    ratings = sum(c["purpose"] == "memory_importance" for c in calls)
    assert ratings == sum(len(agent) for agent in _streams(store, cut))


def test_no_memory_sends_no_memory_stage_and_shows_nothing(store, stub, tmp_path):
    spec, run_id = _start(store, tmp_path, {"kind": "none"}, steps=2)
    assert spec.calls == 12
    assert run_grid(store, run_id).status == "done"
    purposes = Counter(c["purpose"] for c in store.calls.for_conversation(run_id))
    assert purposes == {"grid_message": 6, "grid_move": 6}
    assert all(
        row["memory"] == "" and "retrieved" not in row for row in store.grid_steps.for_run(run_id)
    )
    assert store.memories.count(run_id) == 0


def test_an_unknown_embedder_is_refused_before_anything_is_stored(store, tmp_path):
    """Refused when the experiment is read: no experiment, no run."""
    before = store.db.experiments.count_documents({})
    with pytest.raises(UserError, match="nonsense"):
        _view(store, tmp_path, {"kind": "stream", "embedder": "nonsense:thing"})
    assert store.db.experiments.count_documents({}) == before
    assert store.db.conversations.count_documents({}) == 0


def test_with_the_reference_ranking_what_an_agent_heard_is_retrieved(store, stub, tmp_path):
    """What a grid agent says and hears is perceived as events (observations), which the
    reference code's retrieval reads; stored as chats, its candidates (events and thoughts)
    would leave every heard message out."""
    spec, run_id = _start(store, tmp_path, {**STREAM, "retrieval": "reference"}, steps=2)
    assert spec.memory.candidates == "events_and_thoughts"
    assert run_grid(store, run_id).status == "done"
    stream = store.memories.stream(run_id, 0)
    heard = [r.id for r in stream if r.text.startswith(("agent1 said: ", "agent2 said: "))]
    assert heard and {r.type for r in stream if " said: " in r.text} == {"observation"}
    rows = [r for r in store.grid_steps.for_run(run_id) if r["agent_index"] == 0]
    shown = {i for row in rows if row["step"] == 2 for i in row["retrieved"]}
    assert shown & set(heard)  # step 2's prompts show what the others said


def test_a_spec_resolved_before_the_candidates_setting_keeps_storing_chats(store, stub, tmp_path):
    spec, _ = _start(store, tmp_path, STREAM)
    old = spec.memory.model_copy(update={"candidates": None})
    assert spec.memory.heard_type() == "observation" and old.heard_type() == "chat"
