"""Message counting as in the reference tool: a day's budget (total // days) includes its opening.

In the reference, autogen's max_round = n_messages // days counted the researcher's opening as a
round, so "20 messages" gave 19 agent turns (the paper's transcripts all have 19).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from simulator.domain.llm_choice import LLMChoice
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.worlds.chat.domain.spec import ConversationSpec, split_messages
from simulator.worlds.chat.services import runs as conv_service

LLM = LLMChoice(model="mock:x")


@pytest.fixture
def mock_store():
    opened = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_counting"))
    yield opened
    opened.close()


def run_stored(store, view, spec) -> tuple[dict, list[dict]]:
    doc = run_service.create_run(store, view, spec, "alice")
    llms = LLMAccess(policy=RetryPolicy.no_wait())

    async def go():
        try:
            return await conv_service.run(store, doc["_id"], llms)
        finally:
            await llms.aclose()

    outcome = asyncio.run(go())
    assert outcome.status == "done", outcome.error
    return store.conversations.get(doc["_id"]), store.messages.for_conversation(doc["_id"])


def test_twenty_reference_messages_are_nineteen_turns_after_the_opening(mock_store, prison_path):
    view = exp_service.import_yaml(mock_store, prison_path, "alice")
    spec = conv_service.build_spec(
        view,
        agents="guard=1,prisoner=1",
        total_messages=20,
        llm="mock:x",
        message_counting="reference",
    )
    conv, messages = run_stored(mock_store, view, spec)
    assert len(messages) == 19
    assert conv["day_split"] == [19]
    assert conv["spec"]["message_counting"] == "reference"
    assert conv["counters"]["messages"] == 19
    # round robin with the guard first, as the paper ran it
    assert [m["speaker"] for m in messages[:3]] == ["Guard_1", "Prisoner_1", "Guard_1"]
    # the opening is the day's first message: the researcher's, sent to the first speaker
    first_call = next(
        c for c in conv_service.prompts(mock_store, conv["_id"]) if c["purpose"] == "agent_turn"
    )
    assert first_call["messages"][1]["content"].startswith("Researcher: ")


def test_two_days_of_twenty_one_give_nine_turns_a_day(mock_store, prison_path):
    view = exp_service.import_yaml(mock_store, prison_path, "alice")
    spec = conv_service.build_spec(
        view,
        agents="guard=1,prisoner=2",
        total_messages=21,
        days=2,
        llm="mock:x",
        message_counting="reference",
    )
    assert spec.day_turns == [9, 9]  # 21 // 2 = 10 a day, the opening included; 1 dropped
    conv, messages = run_stored(mock_store, view, spec)
    assert [sum(1 for m in messages if m["day"] == day) for day in (1, 2)] == [9, 9]
    assert conv["day_split"] == [9, 9]


def test_odd_totals_are_accepted_under_both_countings():
    for counting, turns in (("agent_turns", [7]), ("reference", [6])):
        spec = ConversationSpec(
            agents={"Guard": 1},
            total_messages=7,
            role_llms={"Guard": LLM},
            message_counting=counting,
        )
        assert spec.day_turns == turns
    assert split_messages(19, 1) == [19]
    assert split_messages(20, 1, "reference") == [19]
    assert split_messages(10, 3) == [4, 3, 3]  # agent turns: unchanged


def test_reference_minimum_counts_the_opening():
    with pytest.raises(ValueError, match=r"3 days need at least 6 messages .*opening included"):
        ConversationSpec(
            agents={"Guard": 1},
            total_messages=5,
            days=3,
            role_llms={"Guard": LLM},
            message_counting="reference",
        )


def test_run_command_header_and_flag(run_cli, tmp_path, prison_path):
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice"}
    created = run_cli(["experiment", "create", str(prison_path), "--json"], env=env)
    assert created.code == 0, created.err
    exp_id = created.json()["id"]
    args = ["run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "20", "--llm", "mock:x"]
    result = run_cli([*args, "--message-counting", "reference"], env=env)
    assert result.code == 0, result.err
    assert "messages: 20 (reference counting: 19 agent turns)" in result.err
    listed = run_cli(["conversation", "list", "--json"], env=env).json()
    assert listed[0]["counters"]["messages"] == 19
    assert listed[0]["spec"]["message_counting"] == "reference"

    odd = run_cli([*args[:-4], "--messages", "19", "--llm", "mock:x", "--json"], env=env)
    assert odd.code == 0, odd.err
    assert odd.json()["counters"]["messages"] == 19
