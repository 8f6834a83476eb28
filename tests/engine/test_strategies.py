"""Pure pieces of the engine: speaker strategies, day split, spec checks, bleed trimming."""

from __future__ import annotations

import itertools

import pytest

from simulator.domain.llm_choice import LLMChoice
from simulator.prompting.bleed import trim_reply
from simulator.worlds.chat.domain.spec import ConversationSpec, split_messages
from simulator.worlds.chat.engine.agents import Agent
from simulator.worlds.chat.engine.speakers import (
    ManualChoice,
    RandomNoRepeat,
    RoleAlternating,
    RoundRobin,
    TurnState,
    find_agent_names,
)

LLM = LLMChoice(model="mock:a")
AGENTS = [
    Agent("Guard_1", "Guard", LLM),
    Agent("Guard_2", "Guard", LLM),
    Agent("Prisoner_1", "Prisoner", LLM),
]


async def picks(selector, n: int) -> list[str]:
    names, previous = [], None
    for turn in range(n):
        pick = await selector.next_speaker(TurnState(AGENTS, turn, 1, previous))
        names.append(pick.name)
        previous = pick.name
    return names


async def test_round_robin_cycles_in_order():
    assert await picks(RoundRobin(), 4) == ["Guard_1", "Guard_2", "Prisoner_1", "Guard_1"]


async def test_role_alternating_rotates_agents_within_roles():
    assert await picks(RoleAlternating(), 6) == [
        "Guard_1",
        "Prisoner_1",
        "Guard_2",
        "Prisoner_1",
        "Guard_1",
        "Prisoner_1",
    ]


async def test_random_is_seeded_and_never_repeats_immediately():
    first = await picks(RandomNoRepeat(seed=3), 40)
    assert first == await picks(RandomNoRepeat(seed=3), 40)
    assert first != await picks(RandomNoRepeat(seed=4), 40)
    assert all(a != b for a, b in itertools.pairwise(first))
    assert set(first) == {a.name for a in AGENTS}
    alone = [AGENTS[0]]
    pick = await RandomNoRepeat(1).next_speaker(TurnState(alone, 1, 1, "Guard_1"))
    assert pick.name == "Guard_1"


async def test_manual_uses_injected_input_and_reasks_on_unknown_names():
    answers = iter(["nobody", "prisoner_1"])
    pick = await ManualChoice(lambda state: next(answers)).next_speaker(
        TurnState(AGENTS, 0, 1, None)
    )
    assert pick.name == "Prisoner_1" and not pick.fallback

    async def never_valid(state):
        return "x"

    pick = await ManualChoice(never_valid).next_speaker(TurnState(AGENTS, 1, 1, None))
    assert pick.fallback and pick.name == "Guard_2"


def test_agent_names_match_whole_words_only():
    names = ["Guard_1", "Guard_12", "Prisoner_1"]
    assert find_agent_names("guard_12 should speak", names) == ["Guard_12"]
    assert find_agent_names("Guard_1 or Prisoner_1", names) == ["Guard_1", "Prisoner_1"]
    assert find_agent_names("the guard", names) == []


def test_split_is_as_even_as_possible():
    assert split_messages(10, 3) == [4, 3, 3]
    assert split_messages(6, 2) == [3, 3]
    assert sum(split_messages(2400, 7)) == 2400


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"total_messages": 1}, "greater than or equal to 2"),
        ({"days": 4}, "4 days need at least 8 messages"),
        ({"speaker_method": "auto"}, "needs a manager_llm"),
        ({"agents": {"Guard": 0}}, "greater than or equal to 1"),
        ({"agents": {"Guard": 101}}, "less than or equal to 100"),
    ],
)
def test_spec_rejects_impossible_runs(changes, message):
    data = {
        "agents": {"Guard": 1},
        "total_messages": 6,
        "days": 1,
        "role_llms": {"Guard": LLM},
        **changes,
    }
    with pytest.raises(ValueError, match=message):
        ConversationSpec.model_validate(data)


@pytest.mark.parametrize(
    ("raw", "clean", "cut"),
    [
        ("Guard_1: Stay in your cell.", "Stay in your cell.", None),
        ("**Guard:** Stay in your cell. Prisoner: No way!", "Stay in your cell.", "Prisoner"),
        (
            "Stay in your cell.\nPrisoner_1: Why?\nGuard_1: Because.",
            "Stay in your cell.",
            "Prisoner_1",
        ),
        ("Stay. [Prisoner] I won't.", "Stay.", "Prisoner"),
        ("Fine.\n**prisoner 1:** ok", "Fine.", "prisoner 1"),
        ("Quiet! Guard_2: I agree.", "Quiet!", "Guard_2"),
        ("I will talk to the prisoner: you stay.", "I will talk to the prisoner: you stay.", None),
        ("Prisoner: hi", "", "Prisoner"),
    ],
)
def test_bleed_trimming(raw, clean, cut):
    result = trim_reply(raw, "Guard_1", "Guard", ["Guard_2", "Prisoner_1"], ["Prisoner"])
    assert result.text == clean
    assert result.cut_label == cut
    assert result.trimmed == (clean != raw)
    if cut is None:
        assert result.cut_at is None
    else:  # cut_at is the character of the raw reply where the cut began
        assert isinstance(result.cut_at, int)
        assert raw[: result.cut_at].strip().endswith(clean) or clean == ""
        assert cut in raw[result.cut_at :][: len(cut) + 4]
