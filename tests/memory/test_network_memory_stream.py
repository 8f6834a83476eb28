"""The memory stream as the opinion network's memory, through the real openai client over
loopback and the real store: each agent's table answer is its first record, every round's
perceptions become rated, embedded records, the answer prompts show what was recalled and the
rows name it; `none` hides an agent's own earlier answers; planning is refused; the default is
the prompt it always was; a run cancelled mid-round resumes to the same streams and rows with
nothing answered, rated or embedded twice."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import re
import uuid
from collections import Counter, OrderedDict
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from simulator.cli.context import AppContext
from simulator.domain.ids import content_hash
from simulator.errors import UserError
from simulator.llm.embeddings import CachedEmbedder
from simulator.memory.analysis.browser import browse_memories
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.engine.keeper import COUNTERS, MemoryKeeper
from simulator.memory.testing.replies import memory_stream_reply
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.testing.cancelled_run import run_cancelling
from simulator.worlds.network.cli.run import print_header
from simulator.worlds.network.domain.experiment import NetworkExperiment
from simulator.worlds.network.domain.scenario import DEFAULT_FREE_CHAT_PROMPT
from simulator.worlds.network.services import runs as network_runs

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
EXAMPLE = REPO / "prompts" / "experiments" / "network_memory_stream.yaml"
NAME = re.compile(r"Your name is (\w+)\.")
ROUND = re.compile(r"Round (\d+)\. ")
GRAPH = {"type": "complete", "n": 4}
STREAM = {"kind": "stream", "embedder": "mock:16", "top_k": 3, "reflection_threshold": 30}


def reply(body: dict) -> str:
    """Answers whose opinion depends on the agent and the round (so records differ), a
    message per free-chat call, the scripted memory agent's ratings and questions, and
    insights named by their prompt (so no two records share a text)."""
    messages = body["messages"]
    prompt = messages[-1]["content"]
    if "high-level insights" in prompt:
        mark = content_hash(prompt, 8)
        return f"insight {mark} (because of 0, 1)\nanother insight {mark} (because of 2)"
    if messages[0]["role"] != "system":
        return memory_stream_reply()(body)
    name = NAME.search(messages[0]["content"]).group(1)
    if prompt.endswith(DEFAULT_FREE_CHAT_PROMPT):
        return f"{name} says: buy it"
    t = int(ROUND.findall(prompt)[-1])
    opinion = (sum(map(ord, name)) + t) % 11
    return json.dumps({"Thought": f"{name} thinks {t}", "Opinion": opinion, "Decision": "Yes"})


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub", "emb"], latency_s=0.01) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = reply
        yield server


def _view(store, tmp_path, memory: dict | None):
    doc = yaml.safe_load(NETWORK_YAML.read_text(encoding="utf-8"))
    doc["network"]["prompts"] = {"profile": "simulator"}  # the layout a memory is shown in
    if memory is not None:
        doc["memory"] = memory
    path = tmp_path / f"network_{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return exp_service.import_yaml(store, path, "alice")


def _start(store, tmp_path, memory: dict | None, rounds: int = 2, **settings):
    view = _view(store, tmp_path, memory)
    spec = network_runs.build_spec(
        view, llm="openai:stub", seed=3, settings={"rounds": rounds, "graph": GRAPH, **settings}
    )
    return spec, run_service.create_run(store, view, spec, "alice")["_id"]


def _run(store, run_id, cancel_after: int | None = None):
    """Run (or resume) a stored run; with `cancel_after`, cancel it (as Ctrl-C does) once that
    many calls have finished, and return None."""

    return run_cancelling(
        lambda llms, on_call: network_runs.run(store, run_id, llms, on_call=on_call), cancel_after
    )


def _answer_prompt(store, run_id, t: int, agent: str) -> str:
    calls = store.calls.for_conversation(run_id)
    call = next(
        c for c in calls if c["purpose"] == "opinion" and c["day"] == t and c["agent"] == agent
    )
    return store.calls.prompt(call["prompt_hash"])[-1]["content"]


def _header(spec) -> str:
    buffer = io.StringIO()
    print_header(AppContext(err=Console(file=buffer, width=400)), spec)
    return buffer.getvalue()


def test_perceptions_become_records_and_the_prompt_shows_what_was_recalled(store, stub, tmp_path):
    spec, run_id = _start(store, tmp_path, STREAM)
    assert "memory.planning: false (not given)" in spec.defaults_applied
    assert spec.memory.is_stream and spec.memory.planning is False and spec.calls == 8
    header = _header(spec)
    assert "memory: stream: retrieval paper (top 3), reflection at importance 30, planning off" in (
        header
    )
    assert "plus the memory stream's ratings and reflections" in header
    outcome = _run(store, run_id)
    assert outcome.status == "done", outcome.error
    purposes = Counter(c["purpose"] for c in store.calls.for_conversation(run_id))
    # a round: the news, three friends' answers and its own = 5 records of 7 per agent; the
    # seed (7) and round 1 (35) pass 30, and so does round 2: one reflection per agent a round
    # (2 questions, 2 insights each: 4 thoughts, each rated)
    assert purposes == {
        "opinion": 8,
        "memory_importance": 4 + 8 * 5 + 8 * 4,
        "memory_questions": 8,
        "memory_insights": 16,
    }
    assert outcome.counters["reflections"] == 8 and outcome.counters["importance_fallbacks"] == 0
    names = spec.names
    stream = store.memories.stream(run_id, 0)
    observed = [r.text for r in stream if r.type == "observation"]
    news = spec.scenario.round_for(1).new_information
    assert observed[0].startswith("I answered in round 0: opinion ") and stream[0].created == 0
    assert observed[1] == f"News in round 1: {news}"
    assert [text.split(" answered")[0] for text in observed[2:5]] == names[1:]
    assert all(" answered in round 0: " in text for text in observed[2:5])
    mine = (sum(map(ord, names[0])) + 1) % 11
    assert observed[5] == (
        f'I answered in round 1: opinion {mine} of 10, decision Yes ("{names[0]} thinks 1")'
    )
    assert len([r for r in stream if r.type == "thought"]) == 8
    rows = store.network_rounds.for_run(run_id)
    assert all("retrieved" in row for row in rows)
    assert all(row["retrieved"] == [] for row in rows if row["round"] == 0)
    for row in (r for r in rows if r["round"] > 0):
        ids = {r.id: r.text for r in store.memories.stream(run_id, row["agent_index"])}
        assert set(row["retrieved"]) <= set(ids)
        # round 1 finds the seed alone; round 2 the top 3 of the 1 + 5 + 4 records made before
        assert len(row["retrieved"]) == (1 if row["round"] == 1 else 3)
        sent = _answer_prompt(store, run_id, row["round"], row["agent"])
        assert "What you remember:\n" in sent and "Your answer:" not in sent
        assert all(f"- {ids[i]}\n" in sent for i in row["retrieved"])
        assert "Your friends' answers in the last round" in sent  # perception, still shown
    # the memory browser reads the rounds' `retrieved` lists
    browse = browse_memories(store, run_id, agent=names[0], step=2)
    [mine] = browse.agents
    row = next(r for r in rows if (r["round"], r["agent_index"]) == (2, 0))
    assert browse.step_word == "round" and [s.ids for s in mine.steps] == [row["retrieved"]]


def test_free_chat_messages_are_remembered_as_chats(embedded, stub, tmp_path):
    spec, run_id = _start(embedded, tmp_path, STREAM, rounds=1, free_chat=[1])
    assert _run(embedded, run_id).status == "done"
    chats = [r.text for r in embedded.memories.stream(run_id, 0) if r.type == "chat"]
    assert chats == [f"I told my friends in round 1: {spec.names[0]} says: buy it"] + [
        f"{name} told me in round 1: {name} says: buy it" for name in spec.names[1:]
    ]
    message = next(c for c in embedded.calls.for_conversation(run_id) if c["purpose"] == "persuade")
    assert (
        "What you remember:\n- I answered in round 0"
        in (embedded.calls.prompt(message["prompt_hash"])[-1]["content"])
    )


def test_no_memory_hides_the_agents_own_answers_and_stores_nothing(embedded, stub, tmp_path):
    spec, run_id = _start(embedded, tmp_path, {"kind": "none"})
    assert spec.calls == 8 and spec.memory == MemorySettings(kind="none")
    assert "memory: none (nothing carried between steps); the prompts show no earlier" in (
        _header(spec)
    )
    assert _run(embedded, run_id).status == "done"
    purposes = Counter(c["purpose"] for c in embedded.calls.for_conversation(run_id))
    assert purposes == {"opinion": 8}
    sent = _answer_prompt(embedded, run_id, 2, spec.names[0])
    assert "Your answer:" not in sent and "What you remember" not in sent
    assert "Your friends' answers in the last round" in sent
    assert embedded.memories.count(run_id) == 0
    assert all("retrieved" not in row for row in embedded.network_rounds.for_run(run_id))


def test_the_default_memory_is_the_prompt_and_the_version_it_always_was(embedded, stub, tmp_path):
    view = _view(embedded, tmp_path, None)
    experiment = view.experiment
    assert experiment.memory == MemorySettings()
    # stored as before memory blocks: the same fields, so the same version (and sweep keys)
    old = experiment.model_dump(mode="json", include={"llms", "network"})
    assert view.version == content_hash({"kind": "network", **old})
    spec, run_id = _start(embedded, tmp_path, None)
    assert spec.memory == MemorySettings()
    assert not [n for n in spec.defaults_applied if n.startswith("memory")]
    assert "memory:" not in _header(spec)
    assert _run(embedded, run_id).status == "done"
    sent = _answer_prompt(embedded, run_id, 2, spec.names[0])
    assert sent.count("Your answer:") == 2 and "What you remember" not in sent
    assert embedded.memories.count(run_id) == 0
    assert all("retrieved" not in row for row in embedded.network_rounds.for_run(run_id))


# seeds 4 calls, then a round: 4 answers, 20 ratings, 4 questions, 8 insights, 16 ratings (52).
# 62 is two answers into round 2, after its recall; 137 is in round 3's reflections, after
# questions' retrievals (marks stored there would change the rerun's evidence and insights)
@pytest.mark.parametrize(("cancel_after", "complete"), [(62, {0, 1}), (137, {0, 1, 2})])
def test_a_run_cancelled_mid_round_resumes_to_the_same_streams_sending_nothing_twice(
    store, stub, tmp_path, monkeypatch, cancel_after, complete
):
    def forget_vectors():  # the process-wide cache would hide a text embedded again
        monkeypatch.setattr(CachedEmbedder, "_vectors", OrderedDict())

    memory = {**STREAM, "embedder": f"openai:emb@{stub.openai_base_url}"}
    _, whole = _start(store, tmp_path, memory, rounds=3)
    assert _run(store, whole).status == "done"
    forget_vectors()
    _, cut = _start(store, tmp_path, memory, rounds=3)
    assert _run(store, cut, cancel_after=cancel_after) is None
    assert store.conversations.get(cut)["status"] == "interrupted"
    assert {r["round"] for r in store.network_rounds.for_run(cut)} == complete
    stored = {r.text for i in range(4) for r in store.memories.stream(cut, i)}
    forget_vectors()
    since = len(stub.requests)
    outcome = _run(store, cut)
    assert outcome.status == "done", outcome.error
    embedded_again = [
        text
        for request in stub.requests[since:]
        if request.path == "/v1/embeddings"
        for text in (
            [request.body["input"]]
            if isinstance(request.body["input"], str)
            else request.body["input"]
        )
    ]
    assert embedded_again and not stored & set(embedded_again)

    _assert_same_run(store, cut, whole)
    assert outcome.counters["replayed_calls"] > 0


def test_marks_lost_between_the_rows_and_their_write_are_written_again_on_resume(
    embedded, stub, tmp_path, monkeypatch
):
    _, whole = _start(embedded, tmp_path, STREAM, rounds=3)
    assert _run(embedded, whole).status == "done"
    _, cut = _start(embedded, tmp_path, STREAM, rounds=3)
    store_accesses, released = MemoryKeeper.store_accesses, []

    def killed_after_round_2s_rows(self, accessed=None) -> None:
        if accessed is None:  # the held marks, written after a round's rows
            released.append(1)
            if len(released) == 3:  # rounds 0 and 1 written; round 2's rows stored, marks not
                raise asyncio.CancelledError
        store_accesses(self, accessed)

    monkeypatch.setattr(MemoryKeeper, "store_accesses", killed_after_round_2s_rows)
    assert _run(embedded, cut) is None
    monkeypatch.setattr(MemoryKeeper, "store_accesses", store_accesses)
    assert {r["round"] for r in embedded.network_rounds.for_run(cut)} == {0, 1, 2}
    assert _run(embedded, cut).status == "done"
    _assert_same_run(embedded, cut, whole)


def _streams(store, run_id) -> list[list[tuple]]:
    """Each agent's records, ids without the run's own prefix."""
    return [
        [
            (r.type, r.text, r.importance, [e.split("-m")[1] for e in r.evidence], r.created)
            for r in store.memories.stream(run_id, i)
        ]
        for i in range(4)
    ]


def _local(ids: list[str]) -> list[str]:
    return [i.split("-m")[1] for i in ids]


def _assert_same_run(store, cut: str, whole: str) -> None:
    """The resumed run made the uninterrupted one's records and rows, each call answered once
    and each record rated once."""

    def rows(run_id):
        return [
            (r["round"], r["agent"], r["opinion"], _local(r["retrieved"]), _local(r["accessed"]))
            for r in sorted(
                store.network_rounds.for_run(run_id), key=lambda r: (r["round"], r["agent_index"])
            )
        ]

    assert _streams(store, cut) == _streams(store, whole) and rows(cut) == rows(whole)
    calls = [c for c in store.calls.for_conversation(cut) if c["state"] == "done"]
    answered = Counter((c["purpose"], c["day"], c["index"], c["agent"]) for c in calls)
    assert set(answered.values()) == {1}  # nothing answered twice, ratings included
    ratings = sum(c["purpose"] == "memory_importance" for c in calls)
    assert ratings == sum(len(agent) for agent in _streams(store, cut))
    counted = [store.conversations.get(r)["counters"] for r in (cut, whole)]
    assert [{k: c[k] for k in COUNTERS} for c in counted] == [
        {k: counted[1][k] for k in COUNTERS}
    ] * 2  # the keeper's counters continue from the last complete round


def test_planning_is_refused_with_exit_2_and_nothing_stored(tmp_path, run_cli, embedded):
    doc = yaml.safe_load(NETWORK_YAML.read_text(encoding="utf-8"))
    doc["memory"] = {"kind": "stream", "planning": True}
    path = tmp_path / "plans.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    env = {"SIM_DB": str(tmp_path / "db"), "SIM_USER": "alice"}
    refused = run_cli(["experiment", "import", str(path)], env=env)
    assert refused.code == 2
    assert "memory.planning" in refused.err and "grid" in refused.err
    listed = run_cli(["experiment", "list", "--json"], env=env)
    assert listed.code == 0 and json.loads(listed.out) == []
    # a block that got past validation is refused where the run is built, before anything
    view = _view(embedded, tmp_path, None)
    bad = view.experiment.model_copy(
        update={"memory": MemorySettings(kind="stream", planning=True)}
    )
    view = dataclasses.replace(view, experiment=bad)
    with pytest.raises(UserError) as caught:
        network_runs.build_spec(view, llm="openai:stub", seed=1)
    assert caught.value.field == "memory.planning"


def test_an_unknown_embedder_is_refused_before_anything_is_stored(embedded, tmp_path):
    """Refused when the experiment is read: no experiment, no run."""
    before = embedded.db.experiments.count_documents({})
    with pytest.raises(UserError, match="nonsense"):
        _view(embedded, tmp_path, {"kind": "stream", "embedder": "nonsense:thing"})
    assert embedded.db.experiments.count_documents({}) == before
    assert embedded.db.conversations.count_documents({}) == 0


def test_the_shipped_example_loads_with_a_stream_and_no_plans(tmp_path):
    experiment = exp_service.load_file(EXAMPLE)
    assert isinstance(experiment, NetworkExperiment)
    assert experiment.memory.kind == "stream" and experiment.network.free_chat == [2]
    store = open_store_uri(str(tmp_path / "db"))
    try:
        view = exp_service.import_yaml(store, EXAMPLE, "alice")
        spec = network_runs.build_spec(view, llm="openai:stub", seed=1)
    finally:
        store.close()
    assert spec.memory.planning is False and spec.memory.embedder == "minilm"
    assert "memory.planning: false (not given)" in spec.defaults_applied
    assert "memory.embedder: minilm (not given)" in spec.defaults_applied
