"""Placeholders are checked as each prompt text is typed, with the import's own checker."""

from __future__ import annotations

from pathlib import Path

from pty_session import PRISON
from test_menu_keys import keys

from simulator.cli.interactive import prompts as ask
from simulator.domain.yaml_io import load_model
from simulator.worlds.chat.cli.draft import Draft
from simulator.worlds.chat.domain.experiment import Experiment

FINISH = "\x1b\r"  # Esc then Enter submits a multi-line answer
CLEAR_LINE = "\x15"


def prison_draft() -> Draft:
    return Draft.from_experiment(load_model(PRISON, Experiment, "experiment"))


def test_the_draft_names_an_unknown_placeholder_and_the_nearest_known_one():
    draft = prison_draft()
    assert draft.placeholder_problem("Ask the <GAURD_NOUN>.") == (
        "unknown placeholder <GAURD_NOUN> in this text. Did you mean <GUARD_NOUN>?"
    )
    assert draft.placeholder_problem("The <GUARD_NOUN> <GUARD_VERB_WALKS>.") is None
    assert "Known: <AGENTS_NUM>" in draft.placeholder_problem("<ZZZZZZZZ>")  # no near match
    assert Draft().placeholder_problem("<GAURD_NOUN>") is None  # no roles named yet


def test_a_section_with_a_typo_is_refused_where_it_is_typed():
    draft = prison_draft()
    typed = "Watch the <GAURD_NOUN>." + FINISH + CLEAR_LINE + "Watch the <GUARD_NOUN>." + FINISH
    with keys(typed):
        answer = ask.text_block("Role Prisoner, section 'Goal'", check=draft.placeholder_problem)
    assert answer == "Watch the <GUARD_NOUN>."  # the first submission was refused


def test_a_file_read_with_at_is_checked_too(tmp_path: Path):
    draft = prison_draft()
    bad, good = tmp_path / "bad.txt", tmp_path / "good.txt"
    bad.write_text("Obey the <GUARDS_NOUN>.", encoding="utf-8")
    good.write_text("Obey the <GUARD_NOUN>.", encoding="utf-8")
    typed = f"@{bad}" + FINISH + CLEAR_LINE + f"@{good}" + FINISH
    with keys(typed):
        answer = ask.text_block("Role Prisoner, section 'Goal'", check=draft.placeholder_problem)
    assert answer == "Obey the <GUARD_NOUN>."
