"""The shipped party experiment (prompts/experiments/party_grid.yaml) over the loopback stub:
its first hours run with every part of the memory stream at work, and its probe (issue 13)
interviews every agent after the last step, checks each yes against the agent's memory, and
reads relationship density and attendance; a run cut short during the interviews resumes
without asking anything twice."""

from __future__ import annotations

import re
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import REPO, run_grid

from simulator.errors import UserError
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.testing.replies import memory_stream_reply
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.grid.analysis.measures import grid_measures
from simulator.worlds.grid.analysis.party import party_measures
from simulator.worlds.grid.analysis.runs import load_runs
from simulator.worlds.grid.domain.experiment import GridExperiment
from simulator.worlds.grid.services import runs as grid_runs

PARTY = REPO / "prompts" / "experiments" / "party_grid.yaml"
AGENTS = 8


def _message(name: str) -> str:
    return "Come to my party at the cafe at 17:00!" if name == "agent0" else "Hello there."


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.005) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = memory_stream_reply(rating="6", move="stay", message=_message)
        yield server


@pytest.fixture(scope="module", params=["mongomock", "embedded", "wire"])
def default_party(request, tmp_path_factory):
    """(store, run id): the default party run, once per store flavour, for the tests that only
    read it; a fresh database as the `store` fixture gives."""
    from simulator.store.database import open_database
    from simulator.store.store import open_store

    if request.param == "mongomock":
        uri = f"mongomock://{uuid.uuid4().hex}"
    elif request.param == "embedded":
        uri = str(tmp_path_factory.mktemp("party") / "store")
    else:
        uri = request.getfixturevalue("wire_server")
    store = open_store(open_database(uri, f"t_{uuid.uuid4().hex[:10]}"))
    with (
        pytest.MonkeyPatch.context() as env,
        StubLLMServer(models=["stub"], latency_s=0.005) as server,
    ):
        for name in ("OPENAI_API_KEY", "OPENAI_API_BASE"):
            env.delenv(name, raising=False)
        env.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = memory_stream_reply(rating="6", move="stay", message=_message)
        run_id = party_run(store)
        assert run_grid(store, run_id).status == "done"
    yield store, run_id
    store.close()


def party_run(store, memory: dict | None = None, world: dict | None = None) -> str:
    view = exp_service.import_yaml(store, PARTY, "alice")
    block = {**view.experiment.memory.model_dump(), "embedder": "mock:32", **(memory or {})}
    view.experiment.memory = MemorySettings.model_validate(block)
    world = world or {"steps": 2, "radius": 10}  # everyone hears the host at step 1
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world=world)
    return run_service.create_run(store, view, spec, "alice")["_id"]


def measures_of(store, run_id: str) -> dict:
    [run] = load_runs(store, [run_id])
    found = party_measures(store, run)
    assert found is not None
    return found


def test_every_agent_is_interviewed_and_each_yes_is_checked_against_its_stream(default_party):
    store, run_id = default_party
    purposes = Counter(c["purpose"] for c in store.calls.for_conversation(run_id))
    assert purposes["probe_news"] == AGENTS
    assert purposes["probe_knows"] == AGENTS * (AGENTS - 1)
    doc = store.conversations.get(run_id)
    news = [a for a in doc["interviews"] if a["about"] == "news"]
    assert len(news) == AGENTS and len(doc["interviews"]) == AGENTS * AGENTS
    # what the agent was shown is its stream's records retrieved for the question
    asked = next(
        c
        for c in store.calls.for_conversation(run_id)
        if c["purpose"] == "probe_news" and c["agent"] == "agent3"
    )
    prompt = store.calls.prompt(asked["prompt_hash"])[-1]["content"]
    assert "agent0 said: Come to my party at the cafe at 17:00!" in prompt
    shown = next(a for a in news if a["agent"] == "agent3")["retrieved"]
    assert shown and all(i.startswith(f"{run_id}-m00003-") for i in shown)

    party = measures_of(store, run_id)
    assert party["interviewed"] is True
    assert party["news"]["said_yes"] == AGENTS and party["news"]["knows"] == AGENTS
    assert party["news"]["known_share"] == 1.0 and party["news"]["unbacked_yes"] == 0
    assert party["news"]["knew_at_start"] == 1  # only the host's seed memories name it
    assert party["news"]["remembered_by_step"] == [1, AGENTS, AGENTS]
    assert party["news"]["heard_by_step"] == [0, AGENTS, AGENTS]
    # everyone heard the host; the others only spoke "Hello there." to each other, and the
    # stub says yes to "Do you know X?" when what it recalls names X
    rel = party["relationships"]
    assert rel["asked"] == AGENTS * (AGENTS - 1)
    assert rel["unbacked_yes"] == 0 and 0 < rel["density"] <= 1
    yes = {(a["agent"], a["about"]) for a in doc["interviews"] if a["says_yes"]}
    named = {
        f"agent{i}": set(
            re.findall(r"agent\d+", " ".join(r.text for r in store.memories.stream(run_id, i)))
        )
        for i in range(AGENTS)
    }
    names = sorted(named)
    backed = [
        [a, b]
        for a in names
        for b in names
        if a < b and {(a, b), (b, a)} <= yes and b in named[a] and a in named[b]
    ]
    assert rel["edges"] == backed and sum("agent0" in edge for edge in backed) >= 4
    assert rel["density"] == len(backed) / (AGENTS * (AGENTS - 1) / 2)
    assert party["attendance"]["steps"] == []  # two steps end at 10:00: the party is at 17:00
    assert party["attendance"]["reached"] is False


def test_a_yes_with_no_memory_behind_it_is_not_counted_as_knowing(store, stub):
    """With no memory the agents recall nothing; a model that says yes anyway is counted as
    an unbacked yes, never as knowing."""
    stub.reply_fn = lambda body: (
        "Yes, of course."
        if "An interviewer asks you" in body["messages"][-1]["content"]
        else memory_stream_reply(rating="6", move="stay")(body)
    )
    run_id = party_run(store, memory={"kind": "none"})
    assert run_grid(store, run_id).status == "done"
    prompts = [
        store.calls.prompt(c["prompt_hash"])[-1]["content"]
        for c in store.calls.for_conversation(run_id)
        if c["purpose"] == "probe_news"
    ]
    assert len(prompts) == AGENTS and all("(nothing yet)" in p for p in prompts)
    news = measures_of(store, run_id)["news"]
    assert news["said_yes"] == AGENTS and news["knows"] == 0 and news["unbacked_yes"] == AGENTS
    assert news["unclear"] == 0
    rel = measures_of(store, run_id)["relationships"]
    assert rel["density"] == 0 and rel["unbacked_yes"] == AGENTS * (AGENTS - 1)


def test_attendance_counts_who_stood_near_the_place_in_its_hours(store, stub):
    """One simulated hour a step from 08:00: steps 10 and 11 start at 17:00 and 18:00. Every
    agent moves x+1 each step; the host starts on the cafe and walks off it."""
    stub.reply_fn = memory_stream_reply(rating="2", move="x+1")
    run_id = party_run(store, memory={"reflection": False, "planning": False}, world={"steps": 11})
    assert run_grid(store, run_id).status == "done"
    attendance = measures_of(store, run_id)["attendance"]
    assert attendance["steps"] == [10, 11] and attendance["reached"] is True
    [run] = load_runs(store, [run_id])
    near = {
        run.names[i]
        for s in (10, 11)
        for i, (x, y) in enumerate(run.positions[s - 1])
        if max(abs(x - 5), abs(y - 5)) <= 1
    }
    assert set(attendance["attended"]) == near and attendance["count"] == len(near)
    # agent6 starts at (1, 5): after 9 and 10 moves east it stands at (9, 5), then x stops at 9
    assert "agent6" not in near
    # agent1 starts at (1, 1): y stays 1, never within 1 of (5, 5)
    assert "agent1" not in attendance["attended"]


def test_a_run_cut_short_during_the_interviews_asks_nothing_twice(store, stub):
    run_id = party_run(store, memory={"reflection": False, "planning": False})
    whole = party_run(store, memory={"reflection": False, "planning": False})
    assert run_grid(store, whole).status == "done"
    made = len(store.calls.for_conversation(whole))
    assert run_grid(store, run_id, cancel_after=made - 20) is None  # inside the interviews
    assert store.conversations.get(run_id).get("interviews") is None
    assert run_grid(store, run_id).status == "done"
    calls = [c for c in store.calls.for_conversation(run_id) if c["state"] == "done"]
    keys = Counter((c["purpose"], c["day"], c["index"], c["agent"]) for c in calls)
    assert set(keys.values()) == {1}  # nothing answered twice
    assert store.conversations.get(run_id)["counters"]["replayed_calls"] > 0
    answers = lambda r: [(a["agent"], a["about"], a["answer"]) for a in r["interviews"]]  # noqa: E731
    assert answers(store.conversations.get(run_id)) == answers(store.conversations.get(whole))


def test_the_measures_command_reads_the_party(default_party):
    store, run_id = default_party
    [row] = grid_measures(store, [run_id], embed=None)["runs"]
    assert row["news_known_share"] == 1.0 and row["news_said_yes"] == AGENTS
    assert row["news_heard"] == AGENTS and row["attended"] == 0
    assert 0 < row["relationship_density"] <= 1


def test_attendance_without_a_clock_is_refused(store):
    view = exp_service.import_yaml(store, PARTY, "alice")
    view.experiment.memory = MemorySettings(kind="summary")
    with pytest.raises(UserError) as caught:
        grid_runs.build_spec(view, llm="openai:stub", seed=1)
    assert caught.value.field == "memory.minutes_per_step"


def test_the_party_runs_its_first_hours_with_the_whole_memory_stream(store, stub, tmp_path):
    view = exp_service.import_yaml(store, PARTY, "alice")
    experiment = view.experiment
    assert isinstance(experiment, GridExperiment) and experiment.memory.kind == "stream"
    assert len(experiment.personas) == experiment.world.agents == 8
    # the embedder is the packaged MiniLM by default; mock vectors keep the test model-free
    experiment.memory.embedder = "mock:32"
    world = {"steps": 2, "radius": 10}  # everyone within earshot of the host at step 1
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world=world)
    assert "memory.embedder: minilm (not given)" not in spec.defaults_applied
    run_id = run_service.create_run(store, view, spec, "alice")["_id"]
    assert run_grid(store, run_id).status == "done"
    calls = store.calls.for_conversation(run_id)
    purposes = Counter(c["purpose"] for c in calls)
    assert purposes["memory_plan"] == 8 and purposes["memory_plan_hours"] == 8
    host = store.memories.stream(run_id, 0)
    assert host[0].text.startswith("I am hosting a party") and host[0].created == 0
    rows = [r for r in store.grid_steps.for_run(run_id) if r["step"] == 1]
    heard = {r["agent"] for r in rows if "agent0" in r["heard_from"]}
    assert heard == {f"agent{i}" for i in range(1, 8)}
    for name in heard:
        index = int(name.removeprefix("agent"))
        texts = [r.text for r in store.memories.stream(run_id, index)]
        assert "agent0 said: Come to my party at the cafe at 17:00!" in texts


def test_an_answer_that_is_neither_yes_nor_no_is_counted_as_unclear(store, stub):
    """A small model often answers around the question: read as no, and counted apart."""
    stub.reply_fn = lambda body: (
        "I'm Agent 0, happy to help!"
        if "An interviewer asks you" in body["messages"][-1]["content"]
        else memory_stream_reply(rating="6", move="stay")(body)
    )
    run_id = party_run(store, memory={"reflection": False, "planning": False})
    assert run_grid(store, run_id).status == "done"
    doc = store.conversations.get(run_id)
    assert doc["counters"]["interview_fallbacks"] == AGENTS * AGENTS
    news = measures_of(store, run_id)["news"]
    assert news["unclear"] == AGENTS and news["said_yes"] == 0 and news["knows"] == 0
