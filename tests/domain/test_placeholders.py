"""Placeholders read naturally for any counts and role names, and typos are caught early."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.prompting.assembly import (
    agent_system_prompt,
    assemble_sections,
    render_all,
)
from simulator.worlds.chat.prompting.placeholders import resolve


def make(text: str, roles=("Guard", "Prisoner"), pronouns=None) -> Experiment:
    pronouns = pronouns or {}
    return Experiment(
        name="t",
        starting_message=text,
        llms=[{"model": "mock:a"}],
        roles=[
            {
                "name": r,
                "pronoun": pronouns.get(r, "they"),
                "sections": [{"title": "Start", "content": f"You are a {r}."}],
            }
            for r in roles
        ],
    )


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        (
            {"Guard": 1, "Prisoner": 1},
            "one guard watches; the guard's keys; 1 prisoner; 2 agents, two roles",
        ),
        (
            {"Guard": 2, "Prisoner": 3},
            "two guards watch; the guards' keys; 3 prisoners; 5 agents, two roles",
        ),
    ],
)
def test_counts_drive_nouns_possessives_numbers_and_verbs(counts, expected):
    exp = make(
        "<GUARD_NUM_WORD> <GUARD_NOUN> <GUARD_VERB_WATCHES>; the <GUARD_POSS> keys; "
        "<PRISONER_NUM> <PRISONER_NOUN>; <AGENTS_NUM> agents, <ROLES_NUM_WORD> roles"
    )
    assert resolve(exp.starting_message, exp, counts) == expected


def test_irregular_and_multi_word_roles():
    exp = make(
        "<CHILD_POSS> toys, <POLICE_OFFICER_NOUN> <POLICE_OFFICER_VERB_IS> here.",
        roles=("child", "police officer"),
    )
    assert resolve(exp.starting_message, exp, {"child": 2, "police officer": 2}) == (
        "children's toys, police officers are here."
    )
    assert resolve(exp.starting_message, exp, {"child": 1, "police officer": 1}) == (
        "child's toys, police officer is here."
    )


def test_pronouns_follow_configuration_then_plural():
    exp = make("<GUARD_PRON> and <GUARD_POSS_PRON> keys", pronouns={"Guard": "she"})
    assert resolve(exp.starting_message, exp, {"Guard": 1}) == "she and her keys"
    assert resolve(exp.starting_message, exp, {"Guard": 2}) == "they and their keys"


def test_placeholder_touching_punctuation_is_recognised():
    exp = make("Watch the <PRISONER_NOUN>.(<GUARD_NUM>),<GUARD_NOUN>!")
    assert resolve(exp.starting_message, exp, {"Guard": 2, "Prisoner": 1}) == (
        "Watch the prisoner.(2),guards!"
    )


def test_unknown_placeholder_names_field_and_nearest():
    with pytest.raises(ValidationError) as info:
        make("Hello <GAURD_NOUN>.")
    text = str(info.value)
    assert (
        "<GAURD_NOUN>" in text
        and "starting_message" in text
        and "Did you mean <GUARD_NOUN>?" in text
    )


def test_assembly_orders_private_before_shared_with_titles():
    exp = Experiment(
        name="t",
        starting_message="go",
        llms=[{"model": "mock:a"}],
        roles=[
            {
                "name": "Guard",
                "sections": [
                    {"title": "Start", "content": "You guard."},
                    {"title": "Goal", "content": "Keep order."},
                ],
            }
        ],
        shared_sections=[{"title": "Rules", "content": "Be brief."}],
    )
    assert agent_system_prompt(exp, "guard", {"Guard": 1}) == (
        "You guard.\n\n## Goal\nKeep order.\n\n## Rules\nBe brief."
    )
    assert assemble_sections([]) == ""
    assert set(render_all(exp, {"Guard": 1})) == {"starting message", "Guard"}
