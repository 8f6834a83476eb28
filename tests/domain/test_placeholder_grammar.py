"""Placeholders read as English at any count: capitals at sentence starts, verbs that agree with
a singular "they", and a base-form verb (the reference tool's `<GUARD_VERB_MAKE>`) refused with
the placeholder to write instead. Each agent's system prompt also says the agent's own name."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from simulator.domain.verbs import is_base_form, third_person_singular
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.prompting.assembly import agent_system_prompt
from simulator.worlds.chat.prompting.placeholders import known_placeholders, resolve
from simulator.worlds.chat.services import runs as conv_service


def make(text: str, guard_pronoun: str = "they", goal: str = "Keep order.") -> Experiment:
    return Experiment(
        name="t",
        starting_message=text,
        llms=[{"model": "mock:a"}],
        roles=[
            {
                "name": "Guard",
                "pronoun": guard_pronoun,
                "sections": [
                    {"title": "Start", "content": "You are a guard."},
                    {"title": "Goal", "content": goal},
                ],
            },
            {
                "name": "Prisoner",
                "sections": [{"title": "Start", "content": "You are a prisoner."}],
            },
        ],
    )


def render(text: str, guards: int, pronoun: str = "they") -> str:
    experiment = make(text, pronoun)
    return resolve(experiment.starting_message, experiment, {"Guard": guards, "Prisoner": 1})


@pytest.mark.parametrize(
    ("guards", "expected"),
    [
        (1, "One guard. Guard on duty. They stay. Decides. Two agents. Their keys."),
        (2, "Two guards. Guards on duty. They stay. Decide. Three agents. Their keys."),
    ],
)
def test_cap_forms_start_sentences(guards, expected):
    text = (
        "<GUARD_NUM_WORD_CAP> <GUARD_NOUN>. <GUARD_NOUN_CAP> on duty. <GUARD_PRON_CAP> stay. "
        "<GUARD_VERB_DECIDES_CAP>. <AGENTS_NUM_WORD_CAP> agents. <GUARD_POSS_PRON_CAP> keys."
    )
    assert render(text, guards) == expected


def test_cap_forms_are_known_and_suggested():
    experiment = make("go")
    known = known_placeholders(experiment)
    assert {"GUARD_NOUN_CAP", "GUARD_NUM_WORD_CAP", "AGENTS_NUM_WORD_CAP"} <= set(known)
    with pytest.raises(ValidationError) as info:
        make("<GUARD_NOUN_CAPP> arrive.")
    assert "Did you mean <GUARD_NOUN_CAP>?" in str(info.value)
    with pytest.raises(ValidationError) as info:
        make("<ZZZZZZZZ>")
    assert "each also with _CAP for a capital first letter" in str(info.value)


@pytest.mark.parametrize(
    ("text", "guards", "pronoun", "expected"),
    [
        ("<GUARD_PRON> <GUARD_VERB_HAS> the keys", 1, "they", "they have the keys"),
        ("<GUARD_PRON_CAP> <GUARD_VERB_IS> here", 1, "they", "They are here"),
        ("<GUARD_PRON> <GUARD_VERB_WATCHES_CAP>", 1, "they", "they Watch"),
        ("<GUARD_PRON> <GUARD_VERB_IS> here", 1, "he", "he is here"),
        ("<GUARD_PRON>\n<GUARD_VERB_HAS> keys", 1, "she", "she\nhas keys"),
        ("<GUARD_PRON> <GUARD_VERB_IS> here", 2, "he", "they are here"),
        # a noun subject keeps the count's agreement, whatever the pronoun
        ("the <GUARD_NOUN> <GUARD_VERB_HAS> keys", 1, "they", "the guard has keys"),
        ("the <GUARD_NOUN> <GUARD_VERB_HAS> keys", 2, "they", "the guards have keys"),
        # only whitespace may separate the pronoun from its verb
        (
            "<GUARD_PRON> say the <GUARD_NOUN> <GUARD_VERB_IS> late",
            1,
            "they",
            "they say the guard is late",
        ),
    ],
)
def test_a_verb_after_its_roles_pronoun_agrees_with_the_pronoun(text, guards, pronoun, expected):
    assert render(text, guards, pronoun) == expected


def test_a_base_form_verb_is_refused_with_the_placeholder_to_write():
    with pytest.raises(ValidationError) as info:
        make("go", goal="The <GUARD_NOUN> <GUARD_VERB_MAKE> the rules.")
    assert (
        "placeholder <GUARD_VERB_MAKE> in roles[0].sections[1].content gives the verb in its "
        "base form; write the third-person singular: <GUARD_VERB_MAKES> (it becomes 'make' for "
        "several guards)"
    ) in str(info.value)
    # modals, past forms and third-person forms are what the placeholders expect
    for verb in ("IS", "HAS", "DOES", "CAN", "MUST", "WILL", "MADE", "WAS", "WENT", "NEEDS"):
        make(f"<GUARD_VERB_{verb}>")


@pytest.mark.parametrize(
    ("placeholder", "fix"),
    [
        ("GUARD_VERB_LOOK_AFTER", "GUARD_VERB_LOOKS_AFTER"),
        ("GUARD_VERB_NEED", "GUARD_VERB_NEEDS"),
        ("GUARD_VERB_HAVE", "GUARD_VERB_HAS"),
        ("GUARD_VERB_BE", "GUARD_VERB_IS"),
        ("GUARD_VERB_WATCH_CAP", "GUARD_VERB_WATCHES_CAP"),
        ("GUARD_VERB_CAP", "GUARD_VERB_CAPS"),  # the verb "cap", not a capital of nothing
    ],
)
def test_base_forms_get_their_third_person_singular(placeholder, fix):
    with pytest.raises(ValidationError) as info:
        make(f"<{placeholder}>")
    assert f"write the third-person singular: <{fix}>" in str(info.value)


def test_verb_helpers():
    assert [is_base_form(v) for v in ("need", "focus", "proceed", "ought", "agreed", "fed")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert third_person_singular("focus") == "focuses"
    assert third_person_singular("makes") == "makes"  # converting twice is harmless
    assert third_person_singular("can") == "can"
    assert third_person_singular("MAKE") == "MAKES"


def test_the_base_form_error_is_one_paragraph_and_exit_2(tmp_path, prison_path, run_cli):
    text = prison_path.read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("<GUARD_VERB_WATCHES>", "<GUARD_VERB_WATCH>", 1), encoding="utf-8")
    db = tmp_path / "store"
    result = run_cli(["experiment", "create", str(bad)], env={"SIM_DB": str(db)})
    assert result.code == 2, result.err
    error = " ".join(result.err.split())
    assert "<GUARD_VERB_WATCH> in roles[1].sections[4].content gives the verb in its base form" in (
        error
    )
    assert "write the third-person singular: <GUARD_VERB_WATCHES>" in error
    assert "Traceback" not in result.err
    listed = run_cli(["experiment", "list", "--json"], env={"SIM_DB": str(db)})
    assert listed.code == 0 and listed.json() == []


def test_the_system_prompt_tells_the_agent_its_name():
    experiment = make("go")
    prompt = agent_system_prompt(experiment, "Guard", {"Guard": 2, "Prisoner": 1}, "Guard_2")
    assert prompt == "You are a guard.\n\nYour name is Guard_2.\n\n## Goal\nKeep order."
    assert "Your name" not in agent_system_prompt(experiment, "Guard", {"Guard": 1})


def agent_turn_calls(store, agents: str, total: int, **spec_changes) -> list[dict]:
    """Run one mock conversation of `make(...)` and return its agent turns' ledger calls."""
    view = exp_service.create(store, make("The day begins."), "alice")
    spec = conv_service.build_spec(view, agents=agents, total_messages=total)
    spec = spec.model_copy(update=spec_changes)
    llms = LLMAccess(policy=RetryPolicy.no_wait())

    async def go():
        doc = run_service.create_run(store, view, spec, "alice")
        try:
            return await conv_service.run(store, doc["_id"], llms)
        finally:
            await llms.aclose()

    outcome = asyncio.run(go())
    assert outcome.status == "done", outcome.error
    return [c for c in conv_service.prompts(store, outcome.conversation_id) if c["agent"]]


def test_every_agent_is_sent_its_own_name(store):
    turns = agent_turn_calls(store, "guard=2,prisoner=1", 3)
    assert {c["agent"] for c in turns} == {"Guard_1", "Guard_2", "Prisoner_1"}
    for call in turns:
        role = "guard" if call["agent"].startswith("Guard") else "prisoner"
        system = call["messages"][0]["content"]
        assert (system + "\n\n").startswith(
            f"You are a {role}.\n\nYour name is {call['agent']}.\n\n"
        )


def test_a_conversation_from_before_the_name_line_keeps_its_prompts(store):
    """Migration 003 marks stored conversations `agents_know_their_names: false`: resumed, they
    go on with the prompts they began with."""
    turns = agent_turn_calls(store, "guard=1,prisoner=1", 2, agents_know_their_names=False)
    assert len(turns) == 2
    assert all("Your name is" not in c["messages"][0]["content"] for c in turns)
