"""The answers a creation flow collects, turned into an experiment and back (no terminal)."""

from __future__ import annotations

from pty_session import PRISON

from simulator.domain.yaml_io import load_model, validate_model
from simulator.errors import UserError
from simulator.worlds.chat.cli.draft import Draft
from simulator.worlds.chat.domain.experiment import Experiment


def prison() -> Experiment:
    return load_model(PRISON, Experiment, "experiment")


def test_an_experiment_survives_the_round_trip_through_a_draft():
    experiment = prison()
    again = validate_model(Draft.from_experiment(experiment).to_data(), Experiment, "experiment")
    assert again == experiment


def test_slots_follow_the_reference_order_and_label_the_starting_prompts():
    draft = Draft.from_experiment(prison())
    slots = draft.slots()
    assert slots[0] == ("role", "Guard", "Starting prompt")
    assert slots[5] == ("role", "Prisoner", "Starting prompt")
    assert [s[0] for s in slots[10:]] == ["shared"] * 3 + ["summarizer"] * 2
    assert draft.label(slots[0]).endswith("the role's starting prompt")
    assert draft.label(slots[1]) == "Role Guard, section 'Goal'"
    assert draft.missing() == []


def test_renaming_a_role_keeps_its_texts_and_moves_its_placeholders():
    draft = Draft.from_experiment(prison())
    draft.set_roles([("Warden", "she"), ("Prisoner", "they")])
    experiment = validate_model(draft.to_data(), Experiment, "experiment")
    assert experiment.roles[0].name == "Warden" and experiment.roles[0].pronoun == "she"
    assert "<WARDEN_NOUN>" in experiment.starting_message
    assert "<GUARD_" not in str(experiment.model_dump())


def test_new_titles_and_roles_become_missing_slots():
    draft = Draft.from_experiment(prison())
    draft.titles.insert(1, "Mood")
    draft.set_roles([*draft.roles, ("Visitor", "he")])
    missing = draft.missing()
    assert ("role", "Guard", "Mood") in missing
    assert ("role", "Visitor", "Starting prompt") in missing
    assert len(missing) == 2 + 6


def test_an_error_points_at_the_answer_to_change():
    draft = Draft.from_experiment(prison())
    draft.contents[("role", "Prisoner", "Goal")] = "Ask the <GAURD_NOUN>."
    try:
        validate_model(draft.to_data(), Experiment, "experiment")
    except UserError as error:
        assert draft.blame(error.render()) == ("contents", ("role", "Prisoner", "Goal"))
    else:
        raise AssertionError("the typo was accepted")
    assert draft.blame("llms[0].model: unknown backend prefix")[0] == "llms"
    assert draft.blame("experiment: duplicate role names: 'a'")[0] == "roles"
    assert draft.blame("starting_message: String should have at least 1 character")[0] == (
        "starting_message"
    )
