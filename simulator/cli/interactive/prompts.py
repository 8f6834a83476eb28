"""Thin questionary wrappers: every prompt either returns an answer or raises `Cancelled`.

questionary's `.ask()` swallows Ctrl-C and returns None, which every caller would then have to
check; raising one exception instead lets a whole sub-flow unwind to the menu that started it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import questionary
from rich.console import Console
from rich.markup import escape

from simulator.errors import UserError

T = TypeVar("T")

console = Console(highlight=False)


class Cancelled(Exception):
    """The user pressed Ctrl-C (or closed input): leave the current flow, keep the program."""


def ask(question: questionary.Question) -> Any:
    """Run one question; Ctrl-C or end of input becomes `Cancelled`."""
    try:
        answer = question.unsafe_ask()
    except (KeyboardInterrupt, EOFError):
        raise Cancelled from None
    if answer is None:
        raise Cancelled
    return answer


def warn(message: str) -> None:
    console.print(f"[red]{escape(message)}[/red]")


def show_error(error: UserError) -> None:
    """A UserError as the one paragraph the commands print too."""
    console.print(f"[bold red]Error:[/bold red] {escape(error.render())}", soft_wrap=True)


def text(message: str, default: str = "", instruction: str | None = None) -> str:
    return ask(questionary.text(message, default=default, instruction=instruction)).strip()


def ask_required(
    message: str, default: str = "", check: Callable[[str], str | None] | None = None
) -> str:
    """Non-empty text; `check` returns an error message to re-ask with, or None when fine."""
    while True:
        answer = text(message, default=default)
        problem = "a value is required" if not answer else (check(answer) if check else None)
        if problem is None:
            return answer
        warn(problem)
        default = answer


def text_block(message: str, default: str = "", required: bool = False) -> str:
    """Multi-line text (prompts are paragraphs). A lone `@FILE` reads the text from that file."""
    while True:
        answer = ask(
            questionary.text(
                message,
                default=default,
                multiline=True,
                instruction="(Esc then Enter to finish; @FILE reads a file)",
            )
        ).strip()
        if answer.startswith("@") and "\n" not in answer:
            path = Path(answer[1:].strip()).expanduser()
            try:
                answer = path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                warn(f"cannot read {path}: {exc}")
                continue
        if answer or not required:
            return answer
        warn("a value is required")


def ask_number(
    message: str,
    convert: Callable[[str], T],
    check: Callable[[T], str | None] | None = None,
    default: T | None = None,
    optional: bool = False,
) -> T | None:
    """A number, re-asked until it converts and passes `check`; blank means None when optional."""
    while True:
        answer = text(message, default="" if default is None else str(default))
        if not answer and optional:
            return None
        try:
            value = convert(answer)
        except ValueError:
            warn(f"{answer!r} is not a {'whole ' if convert is int else ''}number")
            continue
        problem = check(value) if check else None
        if problem is None:
            return value
        warn(problem)


def ask_int(
    message: str, low: int, high: int, default: int | None = None, optional: bool = False
) -> int | None:
    def within(value: int) -> str | None:
        return None if low <= value <= high else f"{value} is outside {low}–{high}"

    return ask_number(f"{message} ({low}–{high})", int, within, default, optional)


def confirm(message: str, default: bool = False) -> bool:
    return bool(ask(questionary.confirm(message, default=default)))


def password(message: str) -> str:
    """Hidden while typed; the answer is never logged or stored."""
    return ask(questionary.password(message))


def select(
    message: str,
    choices: Sequence[tuple[str, T, str | None]],
    default: T | None = None,
) -> T:
    """Pick one; each choice is (label, value, shortcut key or None for an automatic one)."""
    items = [
        questionary.Choice(label, value=value, shortcut_key=key if key else True)
        for label, value, key in choices
    ]
    start = next((item for item in items if item.value == default), None)
    return ask(
        questionary.select(message, items, default=start, use_shortcuts=True, use_jk_keys=False)
    )


def search_select(message: str, choices: Sequence[tuple[str, T]]) -> T:
    """Pick one of many by typing part of its label (or with the arrow keys)."""
    items = [questionary.Choice(label, value=value) for label, value in choices]
    return ask(questionary.select(message, items, use_search_filter=True, use_jk_keys=False))


def checkbox(
    message: str,
    labels: Sequence[str],
    checked: Sequence[str] = (),
    check: Callable[[list[str]], str | None] | None = None,
) -> list[str]:
    """Pick any of `labels` (space toggles, Enter accepts); re-asked while `check` objects.

    questionary's own `validate=` for checkboxes draws an empty toolbar instead of the message
    (questionary 2.1), so the problem is printed and the question asked again.
    """
    while True:
        items = [questionary.Choice(t, value=t, checked=t in checked) for t in labels]
        picked = ask(questionary.checkbox(message, items))
        problem = check(picked) if check else None
        if problem is None:
            return picked
        warn(problem)
        checked = picked


def ask_names(
    what: str,
    item: str,
    default: Sequence[str] = (),
    minimum: int = 1,
    check: Callable[[str], str | None] | None = None,
) -> list[str]:
    """Several names: comma-separated in one answer, or (blank answer) one at a time, so a
    name containing a comma can still be entered."""
    while True:
        line = text(
            f"{what} (comma-separated; leave empty to enter them one at a time)",
            default=", ".join(default),
        )
        names = [n.strip() for n in line.split(",") if n.strip()] if line else _one_by_one(item)
        problem = _names_problem(names, minimum, check)
        if problem is None:
            return names
        warn(problem)
        default = names


def _one_by_one(item: str) -> list[str]:
    names: list[str] = []
    while True:
        name = text(f"{item} {len(names) + 1} (empty to finish)")
        if not name:
            return names
        names.append(name)


def _names_problem(
    names: list[str], minimum: int, check: Callable[[str], str | None] | None
) -> str | None:
    if len(names) < minimum:
        return f"enter at least {minimum}"
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            return f"{name!r} is given twice; each must be unique"
        seen.add(name.lower())
        problem = check(name) if check else None
        if problem:
            return problem
    return None
