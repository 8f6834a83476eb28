"""Free-chat rounds of a network run through the real openai client over loopback: every agent
messages its friends, each answer prompt shows exactly its friends' messages, the rows keep
`said` and `heard`, the seeds are distinct, bad rounds are refused, and a run cancelled between
the messages and the answers resumes without asking any call again."""

from __future__ import annotations

import asyncio
import io
import json
import re
import uuid
from collections import Counter
from pathlib import Path

import in_process
import pytest
import yaml
from rich.console import Console

from simulator.cli.context import AppContext
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.database import open_database
from simulator.store.store import open_store, open_store_uri
from simulator.testing import StubLLMServer
from simulator.worlds.network.cli.run import print_header
from simulator.worlds.network.domain.answers import MAX_ATTEMPTS
from simulator.worlds.network.domain.scenario import DEFAULT_FREE_CHAT_PROMPT
from simulator.worlds.network.engine.run import graphs_of
from simulator.worlds.network.services import runs as network_runs

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
SIMULATOR = {"profile": "simulator"}  # this tool's own prompt layout, which these tests read
NAME = re.compile(r"Your name is (\w+)\.")
HEARD = re.compile(r"Your friends' messages to you in this round: (\{.*\})")
FRIENDS = re.compile(r"Your friends: (.*)\n")
ANSWER = '{"Thought": "fine", "Opinion": 6, "Decision": "Yes"}'


def is_message(messages: list[dict]) -> bool:
    return messages[-1]["content"].endswith(DEFAULT_FREE_CHAT_PROMPT)


def reply(body: dict) -> str:
    """A message call gets "From NAME: buy it"; an answer call valid JSON."""
    if is_message(body["messages"]):
        return f"From {NAME.search(body['messages'][0]['content']).group(1)}: buy it"
    return ANSWER


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.01) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = reply
        yield server


@pytest.fixture
def mock_store():
    """One flavour is enough where nothing runs (refusals, the header)."""
    opened = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_free_chat"))
    yield opened
    opened.close()


def _run(store, run_id, **kw):
    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        try:
            return await network_runs.run(store, run_id, llms, **kw)
        finally:
            await llms.aclose()

    return asyncio.run(go())


def _view(store):
    return exp_service.import_yaml(store, NETWORK_YAML, "alice")


def _create(store, seed=3, **settings):
    view = _view(store)
    settings = {"prompts": SIMULATOR, **settings}
    spec = network_runs.build_spec(view, llm="openai:stub", seed=seed, settings=settings)
    return spec, run_service.create_run(store, view, spec, "alice")


def test_a_free_chat_round_shows_each_agent_exactly_its_friends_messages(store, stub):
    graph = {"type": "barabasi_albert", "n": 8, "m": 2, "seed": 4}
    spec, run = _create(store, rounds=2, graph=graph, free_chat=[2])
    assert spec.calls == 8 * 2 + 8
    outcome = _run(store, run["_id"])
    assert outcome.status == "done", outcome.error

    sent = [r.body["messages"] for r in stub.chat_requests]
    assert sum(map(is_message, sent)) == 8 and len(sent) == 24  # n messages + n answers, once
    assert outcome.counters["calls"] == 24 and outcome.counters["empty_chat_messages"] == 0

    names, adjacency = spec.names, graphs_of(spec)[0].adj
    friends = {names[i]: [names[j] for j in sorted(adjacency[i]) if j != i] for i in range(8)}
    rows = store.network_rounds.for_run(run["_id"])
    for row in rows:
        if row["round"] != 2:
            assert "said" not in row and "heard" not in row
            continue
        me = row["agent"]
        assert row["said"] == f"From {me}: buy it"
        assert row["heard"] == {f: f"From {f}: buy it" for f in friends[me]}

    calls = store.calls.for_conversation(run["_id"])
    assert Counter((c["purpose"], c["day"]) for c in calls) == {
        ("opinion", 1): 8,
        ("opinion", 2): 8,
        ("persuade", 2): 8,
    }
    heard_by_row = {r["agent"]: r["heard"] for r in rows if r["round"] == 2}
    for call in calls:
        prompt = store.calls.prompt(call["prompt_hash"])
        user = prompt[-1]["content"]
        if call["purpose"] == "persuade":  # the message sees its friends' names, not answers
            assert FRIENDS.search(user).group(1) == ", ".join(friends[call["agent"]])
            assert "answers in the last round" not in user
        elif call["day"] == 2:  # the answer shows exactly its friends' messages, by name
            assert json.loads(HEARD.search(user).group(1)) == heard_by_row[call["agent"]]
        else:
            assert HEARD.search(user) is None

    # answer seeds as without free chat; every message seed differs from every other seed
    seeds = {(c["purpose"], c["day"], c["index"]): c["params"]["seed"] for c in calls}
    assert len(set(seeds.values())) == 24
    for (purpose, t, i), seed in seeds.items():
        if purpose == "opinion":
            assert seed == 3 + ((t - 1) * 8 + i) * MAX_ATTEMPTS


def test_an_empty_message_is_stored_and_counted(store, stub):
    stub.reply_fn = lambda body: "  " if is_message(body["messages"]) else ANSWER
    _, run = _create(store, rounds=1, graph={"type": "complete", "n": 3}, free_chat=[1])
    outcome = _run(store, run["_id"])
    assert outcome.status == "done", outcome.error
    first = [r for r in store.network_rounds.for_run(run["_id"]) if r["round"] == 1]
    assert [r["said"] for r in first] == [""] * 3
    # a complete graph has self-loops: an agent hears its two friends, not itself
    assert [sorted(r["heard"]) for r in first] == [
        sorted(set(r["friends"]) - {r["agent"]}) for r in first
    ]
    assert outcome.counters["empty_chat_messages"] == 3


@pytest.mark.parametrize(
    ("free_chat", "problem"), [([3], "not one of the run's rounds 1..2"), ([1, 1], "named twice")]
)
def test_free_chat_rounds_outside_the_run_or_twice_are_refused(mock_store, free_chat, problem):
    store = mock_store
    view = _view(store)
    with pytest.raises(UserError) as refused:
        network_runs.build_spec(
            view, llm="openai:stub", settings={"rounds": 2, "free_chat": free_chat}
        )
    assert refused.value.field == "network.free_chat" and problem in refused.value.message
    assert "Fix:" in str(refused.value)
    assert store.conversations.count() == 0


def test_the_cli_refuses_a_free_chat_round_past_the_last_with_exit_2(tmp_path, stub):
    experiment = yaml.safe_load(NETWORK_YAML.read_text())
    # round 3 is valid in the experiment (3 rounds); `--rounds 2` shortens the run past it
    experiment["network"].update(graph={"type": "complete", "n": 3}, free_chat=[3], rounds=3)
    path, db = tmp_path / "chat.yaml", tmp_path / "db"
    path.write_text(yaml.safe_dump(experiment))
    store = open_store_uri(str(db))
    try:
        exp_id = exp_service.import_yaml(store, path, "alice").id
    finally:
        store.close()
    env = {"SIM_DB": str(db), "SIM_USER": "alice"}
    refused = in_process.llm_sim("run", exp_id, "--llm", "openai:stub", "--rounds", "2", env=env)
    assert refused.returncode == 2
    assert "network.free_chat" in refused.stderr and "Fix:" in refused.stderr
    assert not stub.chat_requests  # refused before the preflight: nothing asked
    store = open_store_uri(str(db))
    try:
        assert store.conversations.count() == 0  # nothing stored
    finally:
        store.close()


def _header(spec) -> str:
    err = io.StringIO()
    print_header(AppContext(err=Console(file=err, width=300)), spec)
    return err.getvalue()


def test_the_header_names_the_free_chat_rounds_and_a_theory_run_says_it_has_none(mock_store):
    view = _view(mock_store)
    chat = {"rounds": 3, "free_chat": [3, 2], "prompts": SIMULATOR}
    spec = network_runs.build_spec(view, llm="openai:stub", seed=1, settings=chat)
    header = _header(spec)
    assert "free chat before rounds 2, 3 (one message per agent to its friends)" in header
    assert f"({50 * 3 + 50 * 2:,} calls when every answer parses; messages included" in header
    theory = network_runs.build_spec(view, seed=1, settings=chat, theory=True)
    assert "free chat: none (the theory has no messages" in _header(theory)
    plain = network_runs.build_spec(view, llm="openai:stub", seed=1, settings={"rounds": 3})
    assert "free chat" not in _header(plain)


def test_a_run_cancelled_between_the_messages_and_the_answers_replays_the_messages(store, stub):
    spec, run = _create(
        store, rounds=2, graph={"type": "barabasi_albert", "n": 6, "m": 2, "seed": 4}, free_chat=[1]
    )
    stop_after = 6  # round 1's six messages, before any answer is asked

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
    before = [r.body["messages"] for r in stub.chat_requests]
    assert len(before) == 6 and all(map(is_message, before))
    assert store.network_rounds.for_run(run["_id"]) == [
        r for r in store.network_rounds.for_run(run["_id"]) if r["round"] == 0
    ]

    stub.clear_requests()
    outcome = _run(store, run["_id"])
    assert outcome.status == "done", outcome.error
    after = [r.body["messages"] for r in stub.chat_requests]
    assert len(after) == 12 and not any(map(is_message, after))  # no message asked again
    assert outcome.counters["replayed_calls"] == 6 and outcome.counters["calls"] == spec.calls
    calls = [c for c in store.calls.for_conversation(run["_id"]) if c["state"] == "done"]
    places = Counter((c["day"], c["index"], c["purpose"]) for c in calls)
    assert len(places) == 18 and all(n == 1 for n in places.values())
    first = [r for r in store.network_rounds.for_run(run["_id"]) if r["round"] == 1]
    assert all(r["said"] == f"From {r['agent']}: buy it" for r in first)
    assert all(v == f"From {k}: buy it" for r in first for k, v in r["heard"].items())
