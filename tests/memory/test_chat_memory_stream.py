"""The memory stream as the group chat's memory (issue 13), through the real openai client over
loopback and the real store: every message becomes a rated, embedded record in each agent's
stream; the speaker's system prompt shows what it recalled and its message names the records;
`none` opens later days without summaries; a chat plans nothing (planning is refused); a run
cancelled mid-turn resumes to the same streams and messages without asking anything twice; the
memory browser reads a chat run's streams. The default (no block) runs as before."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_memory_helpers import PRISON, SHIPPED, STREAM, chat_reply, experiment_file

from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.memory.engine.keeper import COUNTERS
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.testing.cancelled_run import run_cancelling
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.engine.memory import ChatMemory
from simulator.worlds.chat.prompting.transcript import REMEMBER
from simulator.worlds.chat.services import runs as conv_service


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = chat_reply()
        yield server


def start(store, tmp_path, memory: dict | None, total: int = 6, days: int = 2):
    view = exp_service.import_yaml(store, experiment_file(tmp_path, memory), "alice")
    spec = conv_service.build_spec(
        view, agents="guard=1,prisoner=2", total_messages=total, days=days, seed=4
    )
    return spec, run_service.create_run(store, view, spec, "alice")["_id"]


def run_chat(store, run_id: str, cancel_after: int | None = None):
    """Run (or resume) a stored chat in this process; with `cancel_after`, cancel it (as
    Ctrl-C does) once that many calls have finished, and return None."""

    return run_cancelling(
        lambda llms, on_call: conv_service.run(store, run_id, llms, on_call=on_call), cancel_after
    )


def streams(store, run_id: str) -> list[list[tuple]]:
    return [
        [
            (r.id.split("-m", 1)[1], r.type, r.text, r.importance, r.created, r.depth)
            for r in store.memories.stream(run_id, i)
        ]
        for i in range(3)
    ]


def sent_system(store, call: dict) -> str:
    return store.calls.prompt(call["prompt_hash"])[0]["content"]


def test_messages_become_records_and_the_speaker_is_shown_what_it_recalled(store, stub, tmp_path):
    spec, run_id = start(store, tmp_path, STREAM)
    assert spec.memory.planning is False and spec.memory.minutes_per_step == 10
    assert "memory.planning: false (not given)" in spec.defaults_applied
    assert any(n.startswith("memory calls (ratings, reflections)") for n in spec.defaults_applied)
    outcome = run_chat(store, run_id)
    assert outcome.status == "done", outcome.error
    purposes = Counter(c["purpose"] for c in store.calls.for_conversation(run_id))
    assert purposes["agent_turn"] == 6 and purposes["summary"] == 2
    # every message rated once per agent (3 x 6), and the reflections' insights too
    assert purposes["memory_questions"] == outcome.counters["reflections"] > 0
    thoughts = sum(r[1] == "thought" for agent in streams(store, run_id) for r in agent)
    assert purposes["memory_importance"] == 18 + thoughts
    messages = store.messages.for_conversation(run_id)
    names = [a["name"] for a in store.conversations.get(run_id)["agents"]]
    first = store.memories.stream(run_id, names.index(messages[0]["speaker"]))[0]
    assert first.text == f"I said: {messages[0]['text']}" and first.created == 10
    other = next(i for i, n in enumerate(names) if n != messages[0]["speaker"])
    heard = store.memories.stream(run_id, other)[0]
    assert heard.text == f"{messages[0]['speaker']} said: {messages[0]['text']}"
    assert heard.type == "chat" and heard.importance == 7
    assert messages[0]["retrieved"] == []  # nothing to recall before the first message
    calls = {
        (c["day"], c["index"]): c
        for c in store.calls.for_conversation(run_id)
        if c["purpose"] == "agent_turn"
    }
    for message in messages:
        speaker = names.index(message["speaker"])
        stream = {r.id: r for r in store.memories.stream(run_id, speaker)}
        assert set(message["retrieved"]) <= set(stream) and len(message["retrieved"]) <= 3
        assert set(message["retrieved"]) <= set(message["accessed"])
        # made before this message: records of earlier turns only
        assert all(stream[i].created <= 10 * message["seq"] for i in message["retrieved"])
        system = sent_system(store, calls[(message["day"], message["index"])])
        shown = system.split(REMEMBER, 1)[1]
        assert shown == "\n" + (
            "\n".join(f"- {stream[i].text}" for i in message["retrieved"]) or "(nothing yet)"
        )
    assert any(len(m["retrieved"]) == 3 for m in messages)
    # beside the summaries: day 2 still opens with day 1's summary
    day2 = next(c for (day, index), c in calls.items() if day == 2 and index == 0)
    opening = store.calls.prompt(day2["prompt_hash"])[1]["content"]
    assert "Day 1 summary:\na summary of the day" in opening


def test_a_run_cancelled_mid_turn_resumes_to_the_same_streams_asking_nothing_twice(
    store, stub, tmp_path
):
    _, whole = start(store, tmp_path, STREAM)
    assert run_chat(store, whole).status == "done"
    _, cut = start(store, tmp_path, STREAM)
    assert run_chat(store, cut, cancel_after=12) is None  # the third turn's last rating
    assert store.conversations.get(cut)["status"] == "interrupted"
    assert run_chat(store, cut).status == "done"
    assert streams(store, cut) == streams(store, whole)

    def turns(run_id):
        return [
            (m["speaker"], m["text"], [i.split("-m", 1)[1] for i in m["retrieved"]])
            for m in store.messages.for_conversation(run_id)
        ]

    assert turns(cut) == turns(whole)
    calls = [c for c in store.calls.for_conversation(cut) if c["state"] == "done"]
    answered = Counter((c["purpose"], c["day"], c["index"], c["agent"]) for c in calls)
    assert set(answered.values()) == {1}  # nothing answered twice, ratings included
    ratings = sum(c["purpose"] == "memory_importance" for c in calls)
    assert ratings == sum(len(agent) for agent in streams(store, cut))
    whole_calls = store.calls.for_conversation(whole)
    assert sorted(c["prompt_hash"] for c in calls) == sorted(
        c["prompt_hash"] for c in whole_calls if c["state"] == "done"
    )


def done_hashes(store, run_id: str) -> list[str]:
    done = [c for c in store.calls.for_conversation(run_id) if c["state"] == "done"]
    return sorted(c["prompt_hash"] for c in done)


# 2: the first turn's ratings; 5: the second turn's call; 21 and 30: inside reflections, after
# recalls and reflections moved last accesses (written at once, these change the resumed prompts)
@pytest.mark.parametrize("cancel_after", [2, 5, 21, 30])
def test_resuming_at_any_point_sends_the_prompts_of_an_uninterrupted_run(
    embedded, stub, tmp_path, cancel_after
):
    _, whole = start(embedded, tmp_path, STREAM)
    assert run_chat(embedded, whole).status == "done"
    _, cut = start(embedded, tmp_path, STREAM)
    assert run_chat(embedded, cut, cancel_after=cancel_after) is None
    assert run_chat(embedded, cut).status == "done"
    assert done_hashes(embedded, cut) == done_hashes(embedded, whole)
    assert streams(embedded, cut) == streams(embedded, whole)
    counted = [embedded.conversations.get(r)["counters"] for r in (cut, whole)]
    assert {k: counted[0][k] for k in COUNTERS} == {k: counted[1][k] for k in COUNTERS}
    assert counted[0]["reflections"] > 0  # a resumed run continues the count


def test_a_kill_between_a_message_and_its_last_accesses_is_made_good_on_resume(
    embedded, stub, tmp_path, monkeypatch
):
    """The message of turn 5 is stored, the last accesses its turn moved are not (the process
    died in between): the resumed run writes them from the message's `accessed` first."""
    _, whole = start(embedded, tmp_path, STREAM)
    assert run_chat(embedded, whole).status == "done"
    _, cut = start(embedded, tmp_path, STREAM)
    real = ChatMemory.stored

    def dies_at_fifth(self, turn: int) -> None:
        if turn == 5:
            raise asyncio.CancelledError
        real(self, turn)

    monkeypatch.setattr(ChatMemory, "stored", dies_at_fifth)
    assert run_chat(embedded, cut) is None
    assert len(embedded.messages.for_conversation(cut)) == 5
    monkeypatch.setattr(ChatMemory, "stored", real)
    assert run_chat(embedded, cut).status == "done"
    assert done_hashes(embedded, cut) == done_hashes(embedded, whole)
    last = {r.id.split("-m", 1)[1]: r.last_accessed for r in embedded.memories.stream(cut, 0)}
    assert last == {
        r.id.split("-m", 1)[1]: r.last_accessed for r in embedded.memories.stream(whole, 0)
    }


def test_none_opens_later_days_without_summaries(store, stub, tmp_path):
    spec, run_id = start(store, tmp_path, {"kind": "none"})
    assert any(n.startswith("memory: none, so later days open") for n in spec.defaults_applied)
    assert run_chat(store, run_id).status == "done"
    calls = store.calls.for_conversation(run_id)
    assert Counter(c["purpose"] for c in calls) == {"agent_turn": 6, "summary": 2}
    day2 = next(c for c in calls if c["purpose"] == "agent_turn" and c["day"] == 2)
    opening = store.calls.prompt(day2["prompt_hash"])[1]["content"]
    assert "summary" not in opening and opening.startswith("Researcher: The researcher opens")
    assert [s["text"] for s in store.conversations.summaries(run_id)] == [
        "a summary of the day"
    ] * 2
    assert store.memories.count(run_id) == 0
    assert all("retrieved" not in m for m in store.messages.for_conversation(run_id))


def test_the_default_runs_and_stores_as_before(store, stub, tmp_path):
    spec, run_id = start(store, tmp_path, None)
    dumped = spec.model_dump(mode="json")
    assert "memory" not in dumped and not any("memory" in n for n in spec.defaults_applied)
    view = exp_service.get(store, store.conversations.get(run_id)["experiment_id"], "alice")
    assert "memory" not in store.experiments.get(view.id)["spec"]
    plain = Experiment.model_validate(yaml.safe_load(PRISON.read_text(encoding="utf-8")))
    assert "memory" not in plain.model_dump(mode="json")
    assert run_chat(store, run_id).status == "done"
    calls = store.calls.for_conversation(run_id)
    assert Counter(c["purpose"] for c in calls) == {"agent_turn": 6, "summary": 2}
    assert all(REMEMBER not in sent_system(store, c) for c in calls)
    assert all("retrieved" not in m for m in store.messages.for_conversation(run_id))


def test_a_stream_experiment_has_its_own_version_and_is_duplicated_with_its_block(store, tmp_path):
    plain = exp_service.import_yaml(store, experiment_file(tmp_path, None), "alice")
    stream = exp_service.import_yaml(store, experiment_file(tmp_path, STREAM), "alice")
    assert plain.version != stream.version
    copy = exp_service.duplicate(store, stream.id, "alice")
    assert copy.experiment.memory == stream.experiment.memory
    assert copy.experiment.memory.kind == "stream" and copy.version == stream.version


def test_a_sweep_over_a_stream_experiment_runs_each_conversation_with_its_stream(
    store, stub, tmp_path
):
    from simulator.services import sweeps
    from simulator.services.sweep_runs import SweepRunner
    from simulator.worlds.chat.domain.sweep import SweepSpec

    view = exp_service.import_yaml(store, experiment_file(tmp_path, STREAM), "alice")
    spec = SweepSpec(
        agents={"Guard": 1, "Prisoner": 1},
        total_messages=4,
        days=1,
        llms=["openai:stub"],
        repetitions=2,
        seed=1,
    )
    plan = sweeps.plan(store, view, spec, "alice")
    assert plan.calls_at_least
    assert "memory.planning: false (not given)" in plan.defaults_applied
    sweep, _ = sweeps.create(store, view, spec, "alice", plan)

    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        try:
            await SweepRunner(store, sweep["_id"], llms, poll_s=0.05).run()
        finally:
            await llms.aclose()

    asyncio.run(go())
    runs = list(store.db.conversations.find({"sweep_id": sweep["_id"]}))
    assert len(runs) == 2
    for doc in runs:
        assert doc["status"] == "done"
        assert doc["spec"]["memory"]["kind"] == "stream"
        chats = [
            r for i in range(2) for r in store.memories.stream(doc["_id"], i) if r.type == "chat"
        ]
        assert len(chats) == 2 * 4  # each message, for both agents
        assert all("retrieved" in m for m in store.messages.for_conversation(doc["_id"]))


def test_the_shipped_stream_experiment_loads():
    experiment = exp_service.load_file(SHIPPED)
    assert experiment.memory.kind == "stream" and experiment.memory.planning is None
    memory, _ = experiment.memory.resolved(world_plans=False)
    assert memory.planning is False and memory.top_k == 5
    prison = exp_service.load_file(PRISON)
    assert experiment.roles == prison.roles
    assert experiment.starting_message == prison.starting_message
