"""No agent speaks twice in a row under `auto` and `manual`, as in the reference (autogen's
allow_repeat_speaker=False); `allow_repeat_speaker: true` restores picking the same agent again."""

from __future__ import annotations

import asyncio
import itertools
import re
import uuid

import pytest
from click.testing import CliRunner

from simulator.domain.llm_choice import LLMChoice
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.chat.cli.run import _terminal_picker
from simulator.worlds.chat.engine.agents import Agent
from simulator.worlds.chat.engine.speakers import TurnState, fallback_speaker
from simulator.worlds.chat.services import runs as conv_service

SPEAKER = re.compile(r"^((?:Guard|Prisoner)_\d+): ", re.MULTILINE)


def name_the_last_speaker(body: dict) -> str:
    """The manager always names whoever spoke last (Guard_1 before anyone has)."""
    if body["model"] != "manager":
        return "I hear you."
    transcript = body["messages"][1]["content"]  # the first user message: the day so far
    spoken = SPEAKER.findall(transcript)
    return spoken[-1] if spoken else "Guard_1"


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["agent", "manager"]) as server:
        server.reply_fn = name_the_last_speaker
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        yield server


@pytest.fixture
def mock_store():
    opened = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_repeat"))
    yield opened
    opened.close()


def run(store, prison_path, manual_input=None, **choices) -> tuple[dict, list[dict], list[dict]]:
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = conv_service.build_spec(
        view, agents="guard=2,prisoner=1", total_messages=6, llm="openai:agent", **choices
    )
    doc = run_service.create_run(store, view, spec, "alice")
    llms = LLMAccess(policy=RetryPolicy.no_wait())

    async def go():
        try:
            return await conv_service.run(store, doc["_id"], llms, manual_input=manual_input)
        finally:
            await llms.aclose()

    outcome = asyncio.run(go())
    assert outcome.status == "done", outcome.error
    conv_id = doc["_id"]
    messages = store.messages.for_conversation(conv_id)
    return store.conversations.get(conv_id), messages, conv_service.prompts(store, conv_id)


def test_auto_rejects_the_previous_speaker_by_default(mock_store, stub, prison_path):
    conv, messages, calls = run(
        mock_store, prison_path, speaker="auto", manager_llm="openai:manager"
    )
    speakers = [m["speaker"] for m in messages]
    assert all(a != b for a, b in itertools.pairwise(speakers)), speakers
    assert speakers[0] == "Guard_1" and not messages[0]["speaker_fallback"]
    later = messages[1:]
    assert all(m["speaker_fallback"] for m in later)  # every later pick named the last speaker
    assert all("who just spoke" in " ".join(m["speaker_notes"]) for m in later)
    assert conv["spec"]["allow_repeat_speaker"] is False
    assert conv["counters"]["fallbacks"] == 5

    # the manager was offered only those who may speak, and told why its pick was refused
    picks = [c for c in calls if c["purpose"] == "manager_pick" and c["index"] == 1]
    assert len(picks) == 3  # the question, then two rounds of feedback
    assert "exactly one of: Guard_2, Prisoner_1." in picks[0]["messages"][1]["content"]
    assert (
        "Guard_1 has just spoken and may not speak twice in a row"
        in (picks[1]["messages"][-1]["content"])
    )


def test_auto_may_repeat_when_allowed(mock_store, stub, prison_path):
    conv, messages, _ = run(
        mock_store,
        prison_path,
        speaker="auto",
        manager_llm="openai:manager",
        allow_repeat_speaker=True,
    )
    assert [m["speaker"] for m in messages] == ["Guard_1"] * 6
    assert not any(m["speaker_fallback"] for m in messages)
    assert conv["spec"]["allow_repeat_speaker"] is True


def test_manual_does_not_offer_or_accept_the_previous_speaker(mock_store, stub, prison_path):
    offered: list[tuple[list[str], str | None]] = []
    asked: dict[int, int] = {}

    def ask(state: TurnState) -> str:
        """Names the previous speaker first whenever there is one, then the first one offered."""
        asked[state.turn] = asked.get(state.turn, 0) + 1
        names = [a.name for a in state.eligible]
        offered.append((names, state.barred))
        if state.barred and asked[state.turn] == 1:
            return state.barred
        return names[0]

    _, messages, _ = run(mock_store, prison_path, manual_input=ask, speaker="manual")
    speakers = [m["speaker"] for m in messages]
    assert all(a != b for a, b in itertools.pairwise(speakers)), speakers
    for names, barred in offered:
        assert barred is None or barred not in names
    assert offered[1] == (["Guard_2", "Prisoner_1"], "Guard_1")
    assert not any(m["speaker_fallback"] for m in messages)
    assert "Guard_1 just spoke and may not speak twice in a row" in messages[1]["speaker_notes"]


def test_manual_with_repeats_allowed_takes_the_same_agent(mock_store, stub, prison_path):
    _, messages, _ = run(
        mock_store,
        prison_path,
        manual_input=lambda state: "Prisoner_1",
        speaker="manual",
        allow_repeat_speaker=True,
    )
    assert [m["speaker"] for m in messages] == ["Prisoner_1"] * 6


def test_fallback_skips_the_previous_speaker():
    llm = LLMChoice(model="mock:x")
    agents = [Agent(n, n.split("_")[0], llm) for n in ("Guard_1", "Guard_2", "Prisoner_1")]
    barred = TurnState(agents, 1, 1, "Guard_2", [("Guard_2", "hi")], allow_repeat=False)
    assert fallback_speaker(barred) == "Prisoner_1"  # round robin's Guard_2 just spoke
    allowed = TurnState(agents, 1, 1, "Guard_2", [("Guard_2", "hi")], allow_repeat=True)
    assert fallback_speaker(allowed) == "Guard_2"
    new_day = TurnState(agents, 1, 2, "Guard_2", [], allow_repeat=False)
    assert new_day.barred is None  # a day starts with the researcher's opening


def test_terminal_picker_refuses_the_previous_speaker_with_a_sentence():
    llm = LLMChoice(model="mock:x")
    agents = [Agent("Guard_1", "Guard", llm), Agent("Prisoner_1", "Prisoner", llm)]
    state = TurnState(agents, 1, 1, "Guard_1", [("Guard_1", "hi")], allow_repeat=False)
    runner = CliRunner()
    with runner.isolation(input="guard_1\nPrisoner_1\n") as streams:
        answer = _terminal_picker()(state)
        shown = streams[0].getvalue().decode() + streams[1].getvalue().decode()
    assert answer == "Prisoner_1"
    assert "Next speaker (Prisoner_1; not Guard_1, who just spoke)" in shown
    assert "Guard_1 just spoke and may not speak twice in a row" in shown


def test_run_header_says_when_repeats_are_allowed(run_cli, tmp_path, prison_path):
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice"}
    exp_id = run_cli(["experiment", "create", str(prison_path), "--json"], env=env).json()["id"]
    base = ["run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "2", "--llm", "mock:x"]
    allowed = run_cli([*base, "--speaker", "auto", "--allow-repeat-speaker"], env=env)
    assert allowed.code == 0, allowed.err
    assert "allow_repeat_speaker: true" in allowed.err
    default = run_cli([*base, "--speaker", "auto"], env=env)
    assert "allow_repeat_speaker" not in default.err
    specs = [c["spec"] for c in run_cli(["conversation", "list", "--json"], env=env).json()]
    assert sorted(s["allow_repeat_speaker"] for s in specs) == [False, True]
