"""One key convention for every list: arrows move, Enter picks, typing filters.

The lists are driven in-process through prompt_toolkit's pipe input (no terminal needed); the
source scan keeps every menu on the one helper that builds them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from pty_session import REPO

from simulator.cli.interactive import prompts as ask

DOWN = "\x1b[B"
BACKSPACE = "\x7f"
ENTRIES = [
    ("Show", "show"),
    ("Duplicate and update", "duplicate"),
    ("Export to YAML", "export"),
    ("Delete", "delete"),
    ("Perform conversation", "perform"),
    ("Perform conversations (sweep)", "sweep"),
    ("Conversations", "conversations"),
    ("Back", "back"),
]


@contextmanager
def keys(typed: str) -> Iterator[None]:
    """Questions built inside read `typed` as the keyboard."""
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(typed)
        yield


def pick(typed: str, default: str | None = None) -> str:
    with keys(typed):
        return ask.select("Experiment", ENTRIES, default=default)


def test_typing_filters_and_enter_picks_the_best_match():
    assert pick("delete\r") == "delete"  # letter shortcuts made this Export (d, e, l, e, t, e)
    assert pick("Conversations\r") == "conversations"  # not "Perform conversations" above it
    assert pick("sweep\r") == "sweep"
    assert pick("yaml\r") == "export"


def test_a_letter_alone_never_picks_an_entry():
    assert pick("x" + BACKSPACE + "\r") == "show"  # "x" filtered, then was erased
    assert pick("e\r") == "export"  # the first label starting with "e", not a shortcut


def test_enter_on_a_filter_that_matches_nothing_does_nothing():
    # questionary alone would pick the first entry of the unfiltered list at the first Enter
    assert pick("zzz\r" + BACKSPACE * 3 + DOWN + "\r") == "duplicate"


def test_arrows_and_enter_start_at_the_default():
    assert pick(DOWN + "\r", default="delete") == "perform"


def test_checkbox_letters_filter_instead_of_toggling():
    with keys("a\r"):  # "a" used to tick every entry
        assert ask.checkbox("Methods", ["alpha", "beta"]) == []
    with keys("be " + "\r"):
        assert ask.checkbox("Methods", ["alpha", "beta"]) == ["beta"]


def test_every_list_is_built_by_the_one_helper():
    """A menu built elsewhere (the manual speaker pick was) brings back its own keys."""
    helper = REPO / "simulator" / "cli" / "interactive" / "prompts.py"
    builders = {"select", "rawselect", "checkbox", "Choice", "autocomplete", "expand"}
    found = []
    for path in sorted((REPO / "simulator").rglob("*.py")):
        if path == helper:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in builders
                and isinstance(node.value, ast.Name)
                and node.value.id == "questionary"
            ):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} questionary.{node.attr}")
    assert found == []
