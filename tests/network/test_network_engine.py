"""Network runs through the real openai client over loopback: round 0 from the table, a
scripted DeGroot model against numpy, counted fallbacks, and a resume that repeats no call."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.network.domain.agents_table import read_agents
from simulator.worlds.network.domain.answers import round_zero
from simulator.worlds.network.domain.theory import degroot, rounded_mean
from simulator.worlds.network.engine.run import graphs_of
from simulator.worlds.network.services import runs as network_runs

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
SIMULATOR = {"profile": "simulator"}  # this tool's own prompt layout, which these tests read
SYNTHETIC = REPO / "prompts" / "network" / "agents_synthetic.csv"
FRIENDS = re.compile(r"Your friends' answers in the last round: (\{.*\})")


def degroot_reply(body: dict) -> str:
    """The scripted model of the spec's check: the rounded mean of its friends' opinions."""
    shown = json.loads(FRIENDS.search(body["messages"][-1]["content"]).group(1))
    opinion = rounded_mean([answer["Opinion"] for answer in shown.values()])
    return (
        f'I side with my friends. {{"Thought": "follow", "Opinion": {opinion}, "Decision": "Yes"}}'
    )


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.01) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = degroot_reply
        yield server


def _run(store, run_id, **kw):
    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        try:
            return await network_runs.run(store, run_id, llms, **kw)
        finally:
            await llms.aclose()

    return asyncio.run(go())


def _create(store, seed=3, **settings):
    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    settings = {"prompts": SIMULATOR, **settings}
    spec = network_runs.build_spec(view, llm="openai:stub", seed=seed, settings=settings)
    return spec, run_service.create_run(store, view, spec, "alice")


def test_round_zero_is_the_table_and_a_degroot_model_matches_numpy(store, stub):
    spec, run = _create(store, rounds=4)
    outcome = _run(store, run["_id"])
    assert outcome.status == "done", outcome.error
    rows = store.network_rounds.for_run(run["_id"])
    assert len(rows) == 50 * 5
    table = read_agents(SYNTHETIC)
    zero = [r for r in rows if r["round"] == 0]
    assert [(r["opinion"], r["decision"], r["thought"]) for r in zero] == [
        (a.opinion, "Yes" if a.decision else "No", a.thought) for a in map(round_zero, table)
    ]
    assert all(r["attempts"] == 0 and r["replies"] == [] for r in zero)
    history = [[r["opinion"] for r in rows if r["round"] == t] for t in range(5)]
    graph = graphs_of(spec)[0]
    assert history == degroot(graph, history[0], 4).tolist()
    assert outcome.counters["calls"] == 200 and outcome.counters["answer_fallbacks"] == 0
    assert outcome.counters["messages"] == 250  # one row per agent per round, round 0 included
    assert stub.max_in_flight > 1  # a round's agents are asked together
    # an agent is shown exactly its neighbours' answers, by name
    assert rows[60]["friends"] == [spec.names[j] for j in sorted(graph.adj[10])]


def test_unparsable_answers_are_retried_then_the_previous_answer_is_kept_and_counted(store, stub):
    def eleven(body: dict) -> str:
        return '{"Thought": "too much", "Opinion": 11, "Decision": "Yes"}'

    stub.reply_fn = eleven
    _, run = _create(store, rounds=1, graph={"type": "complete", "n": 3})
    outcome = _run(store, run["_id"])
    assert outcome.status == "done"
    rows = store.network_rounds.for_run(run["_id"])
    first = [r for r in rows if r["round"] == 1]
    zero = [r for r in rows if r["round"] == 0]
    assert [r["opinion"] for r in first] == [r["opinion"] for r in zero]  # kept
    assert all(r["answer_fallback"] and r["attempts"] == 3 for r in first)
    assert outcome.counters["answer_fallbacks"] == 3
    calls = store.calls.for_conversation(run["_id"])
    assert Counter(c["purpose"] for c in calls) == {
        "opinion": 3,
        "opinion_retry_2": 3,
        "opinion_retry_3": 3,
    }
    assert len({c["params"]["seed"] for c in calls}) == 9  # every retry has a new seed


def test_prose_then_json_and_a_string_opinion_parse(store, stub):
    stub.reply_fn = lambda body: (
        'Well, I think so. {"thought": "ok", "opinion": "7", "decision": "no"}'
    )
    _, run = _create(store, rounds=1, graph={"type": "complete", "n": 3})
    _run(store, run["_id"])
    first = [r for r in store.network_rounds.for_run(run["_id"]) if r["round"] == 1]
    assert [(r["opinion"], r["decision"], r["attempts"]) for r in first] == [(7, "No", 1)] * 3


def test_an_interrupted_round_resumes_without_repeating_a_stored_call(store, stub):
    spec, run = _create(
        store, rounds=3, graph={"type": "barabasi_albert", "n": 12, "m": 2, "seed": 4}
    )
    stop_after = 18  # round 1's twelve calls, then six of round 2's

    async def interrupted():
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        task = None
        seen = 0

        def on_call(doc):
            nonlocal seen
            seen += 1
            if seen == stop_after and task is not None:
                task.cancel()

        try:
            task = asyncio.ensure_future(network_runs.run(store, run["_id"], llms, on_call=on_call))
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            await llms.aclose()

    asyncio.run(interrupted())
    assert store.conversations.get(run["_id"])["status"] == "interrupted"
    stored_calls = store.calls.for_conversation(run["_id"])
    answered = sum(1 for c in stored_calls if c["state"] == "done")
    outcome = _run(store, run["_id"])
    assert outcome.status == "done", outcome.error
    calls = [c for c in store.calls.for_conversation(run["_id"]) if c["state"] == "done"]
    places = Counter((c["day"], c["index"], c["purpose"]) for c in calls)
    assert all(n == 1 for n in places.values())  # every (round, agent) answered exactly once
    assert len(places) == 36
    assert outcome.counters["replayed_calls"] == answered - 12
    assert outcome.counters["messages"] == 12 * 4
    history = [
        [r["opinion"] for r in store.network_rounds.for_run(run["_id"]) if r["round"] == t]
        for t in range(4)
    ]
    assert history == degroot(graphs_of(spec)[0], history[0], 3).tolist()
