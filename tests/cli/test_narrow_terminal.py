"""The interactive menu in a 24x80 terminal, read off an emulated screen (pyte) as a person
would see it: questions stay short, the section text being typed is shown whole, a long
placeholder error wraps instead of being cut, and the checkbox hint names the keys that work."""

from __future__ import annotations

import pytest
from pty_session import DOWN, ENTER, FINISH
from screen import Screen

from simulator.worlds.chat.cli.draft import Draft

pytestmark = pytest.mark.pty

MAIN = "What do you want to do?"
NARROW = {"COLUMNS": "80", "LINES": "24", "SIM_USER": "alice"}
CTRL_A = "\x01"
TAB = "\t"
SPACE = " "
TICKED, UNTICKED = "●", "○"


def letters(text: str) -> str:
    """`text` without whitespace: what the screen shows, however it wrapped the lines."""
    return "".join(text.split())


def start_creation(app, screen: Screen, titles: str) -> None:
    """Create: name, starting message, one mock LLM, then the section titles."""
    app.menu(MAIN, "Create")
    app.answer("Experiment name", "Tiny jail" + ENTER)
    app.answer("Starting message", "The <WARDEN_NOUN> meets the <INMATE_NOUN>." + FINISH)
    app.answer("(e.g. local:smollm2", "mock:echo" + ENTER)
    app.answer("Set generation parameters for mock:echo?", "n")
    app.answer("Add another LLM?", "n")
    app.answer("Section titles", titles + ENTER)
    app.expect("Which sections are shared by every role?")
    screen.until("type to filter)")


def rows_of(screen: Screen, *labels: str) -> list[str]:
    """The screen row of each checkbox entry (its tick mark, then its label)."""
    entries = [line for line in screen.lines if line.lstrip(" »")[:1] in (TICKED, UNTICKED)]
    return [next(line for line in entries if line.endswith(f" {label}")) for label in labels]


def test_a_section_text_and_its_placeholder_error_are_readable_at_80_columns(spawn):
    app = spawn(**NARROW)
    screen = Screen(app)
    start_creation(app, screen, "Starting prompt, Rules")
    app.child.send(DOWN + SPACE + ENTER)  # Rules is shared
    app.answer("Role names", "Warden, Inmate" + ENTER)
    app.answer("Pronoun for Warden", "she" + ENTER)
    app.answer("Pronoun for Inmate", ENTER)
    app.answer("Summarizer section titles", ENTER)
    app.answer("Summarizer section title 1", ENTER)  # none: no daily summary
    app.answer("Mark as one of your favourites?", "n")
    app.answer("Note (optional)", ENTER)

    # the long explanation is printed above; the question on the answer's line is short
    screen.until("Role Warden, section 'Starting prompt' — the role's starting prompt")
    screen.until("Warden: Starting prompt")
    question = next(line for line in screen.lines if line.startswith("? Warden: Starting prompt"))
    assert len(question) < 80, screen.text
    typed = (
        "You are the <WARDEN_NOUN> of a small prison. Every morning you count "
        "<INMATE_NUM_WORD> <XYZZY> and write down what you saw in the log book."
    )
    app.child.send(typed + FINISH)
    draft = Draft(roles=[("Warden", "she"), ("Inmate", "they")])
    problem = draft.placeholder_problem(typed)
    assert problem is not None and len(problem) > 3 * 80  # the error names every placeholder
    screen.until(problem)  # every word of it, wrapped, none cut at the screen's edge
    assert letters(typed) in letters(screen.text), screen.text

    fixed = typed.replace("<XYZZY>", "<INMATE_NOUN>")
    app.child.send("\x15" + fixed + FINISH)  # Ctrl-U empties the line; the fixed text
    # at 80 columns each label is printed above its question: type once the question is up
    app.expect("Role Inmate, section 'Starting prompt'")
    app.answer("Inmate: Starting prompt", "You are the <INMATE_NOUN>." + FINISH)
    app.expect("Shared section 'Rules' (every role sees it)")
    app.answer("Shared: Rules", "Be brief." + FINISH)
    app.answer("Agents of role Warden for the preview", ENTER)
    app.answer("Agents of role Inmate for the preview", ENTER)
    app.menu("Save?", "yes")
    app.expect("Created experiment")
    app.menu(MAIN, "Exit")
    output = app.finish()
    assert "Every morning you count" in output


def test_the_checkbox_hint_names_the_keys_that_work(spawn):
    app = spawn(**NARROW)
    screen = Screen(app)
    start_creation(app, screen, "Starting prompt, Rules, Diary")
    hint = "(<space> ticks, <ctrl-a> all or none, <tab> inverts, type to filter)"
    screen.until(hint)
    screen.until(f"{UNTICKED} Diary")  # the hint can be drawn before the entries below it
    assert "to invert" not in screen.joined()  # questionary's own hint said <ctrl-a> twice
    labels = ("Starting prompt", "Rules", "Diary")
    assert all(UNTICKED in row for row in rows_of(screen, *labels)), screen.text

    app.child.send(CTRL_A)
    screen.until(f"{TICKED} Diary")
    assert all(TICKED in row for row in rows_of(screen, *labels)), screen.text
    app.child.send(TAB)
    screen.until(f"{UNTICKED} Diary")
    assert all(UNTICKED in row for row in rows_of(screen, *labels)), screen.text
    app.child.send(DOWN + SPACE + TAB)  # tick Rules, then invert: the other two
    screen.until(f"{TICKED} Diary")
    rows = rows_of(screen, *labels)
    assert [TICKED in row for row in rows] == [True, False, True], screen.text
    app.child.send(TAB + ENTER)  # Rules alone is shared
    app.answer("Role names", "\x03")  # Ctrl-C: leave the creation
    app.expect("Cancelled.")
    app.menu(MAIN, "Exit")
    app.finish()
