"""Keeping prompts readable in a narrow terminal (80 columns and up).

prompt_toolkit draws a question on the same line as its answer, and indents every further line
of a multi-line answer by the question's width: a long question leaves the typed text no room
at all. So a question stays short; what explains it is printed above it, on its own lines,
wrapped to the terminal's width by rich. prompt_toolkit's validation error is a one-line
toolbar and list entries are one line each, both cut at the screen's edge: here they wrap.
"""

from __future__ import annotations

import textwrap

import questionary
from prompt_toolkit.application import get_app
from prompt_toolkit.filters import to_filter
from prompt_toolkit.layout.containers import Window
from prompt_toolkit.layout.controls import FormattedTextControl, UIControl
from rich.console import Console

# The longest question shown on its answer's line: 80 columns less room to see what is typed.
QUESTION_LIMIT = 60
ROOM_TO_TYPE = 20  # columns a question leaves free in a narrower terminal
ENTRY_INDENT = "   "  # a wrapped list entry's further lines start under its label


def explain(console: Console, note: str | None) -> None:
    """An explanation on its own line(s) above the next prompt, wrapped to the terminal."""
    if note:
        console.print(note, markup=False, highlight=False, style="cyan")


def question_limit(console: Console) -> int:
    """How long a question may be in this terminal."""
    return max(20, min(QUESTION_LIMIT, console.width - ROOM_TO_TYPE))


def fitted(console: Console, message: str) -> str:
    """`message` as the question to show: a question too long for the terminal is printed in
    full above (wrapped) and shown shortened, so the answer keeps its room."""
    limit = question_limit(console)
    if len(message) <= limit:
        return message
    explain(console, message)
    return message[: limit - 1].rstrip() + "…"


def fits_beside(console: Console, message: str, instruction: str) -> bool:
    """Whether `instruction` fits on the question's line (`? message instruction`)."""
    return len(message) + len(instruction) + 4 <= console.width


def paragraph(text: str) -> str:
    """`text` broken at spaces to the running prompt's width: a validation error read whole,
    not cut mid-word by the toolbar's own wrapping."""
    columns = get_app().output.get_size().columns
    return textwrap.fill(text, width=max(20, columns - 1), break_on_hyphens=False)


def wrap_validation_errors(question: questionary.Question) -> None:
    """Let a text prompt's validation error take the lines it needs instead of one line cut
    at the screen's edge (prompt_toolkit's ValidationToolbar is one line high)."""
    for window in question.application.layout.find_all_windows():
        if _is_validation_toolbar(window.content):
            window.height = None
            window.wrap_lines = to_filter(True)


def _is_validation_toolbar(control: UIControl) -> bool:
    if not isinstance(control, FormattedTextControl):
        return False
    return getattr(control.text, "__qualname__", "").startswith("ValidationToolbar.")


def wrap_entries(window: Window) -> None:
    """A list's entries wrap (the further lines indented under the label) instead of being cut
    at the screen's edge."""
    window.wrap_lines = to_filter(True)
    window.get_line_prefix = lambda line, wrap_count: ENTRY_INDENT if wrap_count else ""
