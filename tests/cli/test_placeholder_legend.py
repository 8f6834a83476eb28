"""While section texts are typed, the menu lists the placeholders with what they become for one
agent and for two, as the reference tool did (`<GUARD_NOUN>: guard (guards)`)."""

from __future__ import annotations

from pty_session import PRISON
from test_menu_keys import keys

from simulator.domain.yaml_io import load_model
from simulator.worlds.chat.cli import create_menu as create
from simulator.worlds.chat.cli.draft import Draft
from simulator.worlds.chat.domain.experiment import Experiment

FINISH = "\x1b\r"  # Esc then Enter submits a multi-line answer
CLEAR_LINE = "\x15"


def prison_draft() -> Draft:
    return Draft.from_experiment(load_model(PRISON, Experiment, "experiment"))


def test_the_legend_comes_before_a_section_text(capsys):
    draft = prison_draft()
    slot = ("role", "Prisoner", "Goal")
    with keys(CLEAR_LINE + "Ask the <GUARD_NOUN> for yard time." + FINISH):
        create.edit_content(draft, slot)
    assert draft.contents[slot] == "Ask the <GUARD_NOUN> for yard time."
    shown = capsys.readouterr().out
    for line in [
        "Placeholders for Guard:",
        "  <GUARD_NOUN>: guard (guards)",
        "  <GUARD_POSS>: guard's (guards')",
        "  <GUARD_NUM>: 1, 2, 3, ...",
        "  <GUARD_NUM_WORD>: one (two)",
        "  <GUARD_PRON>: they (they)",
        "  <GUARD_POSS_PRON>: their (their)",
        "  <GUARD_VERB_WATCHES>: watches (watch)",  # a verb the experiment already uses
        "Placeholders for Prisoner:",
        "  <PRISONER_NOUN>: prisoner (prisoners)",
        "  <ROLES_NUM>: 2; <ROLES_NUM_WORD>: two",
        "Add _CAP at a sentence start: <GUARD_NOUN_CAP>: Guard (Guards)",
    ]:
        assert line in shown.splitlines(), shown


def test_new_sections_get_one_legend_with_each_roles_pronoun(capsys):
    draft = prison_draft()
    draft.set_roles([("Guard", "she"), ("Prisoner", "they")])
    draft.titles.insert(1, "Mood")
    with keys("Calm." + FINISH + "Tense." + FINISH):
        create.fill_missing(draft)
    assert draft.contents[("role", "Guard", "Mood")] == "Calm."
    assert draft.contents[("role", "Prisoner", "Mood")] == "Tense."
    shown = capsys.readouterr().out
    assert shown.count("Placeholders for Guard:") == 1
    assert "  <GUARD_PRON>: she (they)" in shown.splitlines()
    assert "  <GUARD_POSS_PRON>: her (their)" in shown.splitlines()

    # the starting message is typed before any role exists: nothing to list yet
    empty = Draft()
    with keys("The day begins." + FINISH):
        create.step_starting_message(empty, editing=False)
    assert empty.starting_message == "The day begins."
    assert "Placeholders for" not in capsys.readouterr().out
