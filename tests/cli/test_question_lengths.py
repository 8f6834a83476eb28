"""Every question the menus ask is short enough for an 80-column terminal with room left to
type: an explanation goes in the prompt's `note` (printed above it, wrapped), not in the
question. Read from the source, so a new long question fails here before a person sees it cut."""

from __future__ import annotations

import ast
from pathlib import Path

from rich.console import Console

from simulator.cli.interactive import prompts
from simulator.cli.interactive.fit import QUESTION_LIMIT, fitted

CLI = Path(prompts.__file__).resolve().parents[1]
PACKAGE = CLI.parent
# the house's menus and each world's and the memory package's own (their cli/ folders)
MENUS = [CLI, *sorted(PACKAGE.glob("worlds/*/cli")), PACKAGE / "memory" / "cli"]
ASKING = {
    "text",
    "ask_required",
    "text_block",
    "ask_number",
    "ask_int",
    "confirm",
    "password",
    "select",
    "select_question",
    "checkbox",
    "ask_names",
}
FIELD = 4  # the least a {value} in an f-string adds (a short id, a number)
RANGE = 12  # ask_int adds " (low–high)"


def shortest(node: ast.expr) -> int | None:
    """The fewest characters a question can show: its literal text, each {value} as FIELD."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return len(node.value)
    if isinstance(node, ast.JoinedStr):
        return sum(len(v.value) if isinstance(v, ast.Constant) else FIELD for v in node.values)
    return None  # built elsewhere (a delete question): fit.fitted shortens it if needed


def questions() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(p for folder in MENUS for p in folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner = node.func.value
            if node.func.attr not in ASKING or not (
                isinstance(owner, ast.Name) and owner.id == "ask" and node.args
            ):
                continue
            length = shortest(node.args[0])
            if length is not None:
                length += RANGE if node.func.attr == "ask_int" else 0
                where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
                found.append((where, length, ast.unparse(node.args[0])))
    return found


def test_the_menus_ask_questions():
    assert len(questions()) > 50  # the scan finds the menus' questions (it would pass on none)


def test_every_question_is_short():
    long = [q for q in questions() if q[1] > QUESTION_LIMIT]
    assert not long, "\n".join(f"{where}: {text} ({n} characters)" for where, n, text in long)


def test_a_question_built_too_long_is_printed_whole_above_and_shown_short():
    """A question made from stored names (a delete question counting what goes with it) can
    outgrow the limit: it is printed in full, wrapped, and the prompt line shows it shortened."""
    console = Console(width=80, record=True)
    long = "Delete conv_7f3a9c with its 120 messages, 240 calls, 12 summaries and 3 forks?"
    shown = fitted(console, long)
    assert len(shown) <= QUESTION_LIMIT and shown.endswith("…")
    assert long[: len(shown) - 1].rstrip() == shown[:-1]
    printed = console.export_text()
    assert " ".join(printed.split()) == long and max(map(len, printed.splitlines())) <= 80
    assert fitted(Console(width=80, record=True), "Delete conv_7f3a9c?") == "Delete conv_7f3a9c?"
