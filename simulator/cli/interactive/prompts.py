"""Thin questionary wrappers: every prompt either returns an answer or raises `Cancelled`.

questionary's `.ask()` swallows Ctrl-C and returns None, which every caller would then have to
check; raising one exception instead lets a whole sub-flow unwind to the menu that started it.

One key convention for every list (menus, pickers, checkboxes), built only here: the arrow keys
move, Enter picks (Space ticks in a checkbox), and typing filters the list. Letters and digits
never pick an entry by themselves: no shortcut keys, no j/k, no a/i in checkboxes.

Every question is short; a `note` explaining it is printed above it, wrapped to the terminal
(see fit.py), so the answer has the terminal's width even at 80 columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import questionary
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from questionary.prompts.common import InquirerControl
from rich.console import Console
from rich.markup import escape

from simulator.cli.interactive import fit
from simulator.errors import UserError

T = TypeVar("T")

console = Console(highlight=False, emoji=False)

MULTILINE_HINT = "(Esc then Enter to finish; @FILE reads a file)"
# questionary's own hint names <ctrl-a> twice; with typing filtering the list, Ctrl-A ticks
# every entry (or none when all are) and Tab (Ctrl-I) inverts the ticks
CHECKBOX_HINT = "(<space> ticks, <ctrl-a> all or none, <tab> inverts, type to filter)"


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
    console.print(f"[bold red]Error:[/bold red] {escape(error.render())}")  # wrapped at words


def headline(message: str, note: str | None = None) -> str:
    """Print `note` above the prompt about to be asked; `message` as it will be shown."""
    fit.explain(console, note)
    return fit.fitted(console, message)


def text(message: str, default: str = "", note: str | None = None) -> str:
    return ask(questionary.text(headline(message, note), default=default)).strip()


def ask_required(
    message: str,
    default: str = "",
    check: Callable[[str], str | None] | None = None,
    note: str | None = None,
) -> str:
    """Non-empty text; `check` returns an error message to re-ask with, or None when fine."""
    while True:
        answer = text(message, default=default, note=note)
        problem = "a value is required" if not answer else (check(answer) if check else None)
        if problem is None:
            return answer
        warn(problem)
        default = answer


def text_block(
    message: str,
    default: str = "",
    required: bool = False,
    check: Callable[[str], str | None] | None = None,
    note: str | None = None,
) -> str:
    """Multi-line text (prompts are paragraphs). A lone `@FILE` reads the text from that file.

    The answer (or the file's text) is checked when submitted: a problem is shown under the
    prompt (wrapped, however long) and the text stays there to be fixed, so a typo is caught
    where it was typed. The text is typed on the lines below the question, from the first
    column: it has the terminal's whole width.
    """

    def verdict(raw: str) -> str | bool:
        try:
            value = _expand_file(raw.strip())
        except ValueError as exc:
            return fit.paragraph(str(exc))
        if not value:
            return "a value is required" if required else True
        problem = check(value) if check else None
        return fit.paragraph(problem) if problem else True

    shown = headline(message, note)
    hint = MULTILINE_HINT
    if not fit.fits_beside(console, shown, hint):
        fit.explain(console, hint)
        hint = ""
    prompt = questionary.text(
        shown,
        default=default,
        multiline=True,
        # questionary writes " {instruction} " after the question: the answer starts on the
        # next line, after that one space, and so do its further lines
        instruction=f"{hint}\n",
        prompt_continuation=" ",
        validate=verdict,
        validate_while_typing=False,
    )
    fit.wrap_validation_errors(prompt)
    return _expand_file(ask(prompt).strip())


def _expand_file(answer: str) -> str:
    """The text of FILE for a lone `@FILE` answer, else the answer itself."""
    if not answer.startswith("@") or "\n" in answer:
        return answer
    path = Path(answer[1:].strip()).expanduser()
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None


def ask_number(
    message: str,
    convert: Callable[[str], T],
    check: Callable[[T], str | None] | None = None,
    default: T | None = None,
    optional: bool = False,
    note: str | None = None,
) -> T | None:
    """A number, re-asked until it converts and passes `check`; blank means None when optional."""
    while True:
        answer = text(message, default="" if default is None else str(default), note=note)
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
    message: str,
    low: int,
    high: int,
    default: int | None = None,
    optional: bool = False,
    note: str | None = None,
) -> int | None:
    def within(value: int) -> str | None:
        return None if low <= value <= high else f"{value} is outside {low}–{high}"

    return ask_number(f"{message} ({low}–{high})", int, within, default, optional, note)


def confirm(message: str, default: bool = False, note: str | None = None) -> bool:
    return bool(ask(questionary.confirm(headline(message, note), default=default)))


def password(message: str) -> str:
    """Hidden while typed; the answer is never logged or stored."""
    return ask(questionary.password(headline(message)))


def select_question(
    message: str,
    choices: Sequence[tuple[str, T]],
    default: T | None = None,
    note: str | None = None,
) -> questionary.Question:
    """The one way a list is built (see the module doc)."""
    items = [questionary.Choice(label, value=value) for label, value in choices]
    start = next((item for item in items if item.value == default), None)
    question = questionary.select(
        headline(message, note),
        items,
        default=start,
        use_shortcuts=False,
        use_arrow_keys=True,
        use_jk_keys=False,
        use_search_filter=True,
    )
    _rank_and_guard(question)
    return question


class _RankedControl(InquirerControl):
    """questionary's list, with the filter's matches ordered: labels that start with the typed
    text, then labels with a word that does, then the rest; so typing "Conversations" points at
    "Conversations", not at "Perform conversations" listed above it."""

    @property
    def filtered_choices(self) -> list:
        typed = (self.search_filter or "").lower()
        if not typed:
            return self.choices
        ranked = sorted(
            (rank, index, choice)
            for index, choice in enumerate(self.choices)
            if (rank := _match_rank(str(choice.title).lower(), typed)) is not None
        )
        self.found_in_search = bool(ranked)
        return [choice for _, _, choice in ranked] if ranked else self.choices


def _match_rank(label: str, typed: str) -> tuple[int, int] | None:
    """How well `label` matches: it starts with the typed text; a word does (an earlier word
    first, so an id typed in a listing finds the entry named by it before one that only
    mentions it, as a fork's 'fork of ID'); the text is somewhere in it; None: no match."""
    if label.startswith(typed):
        return (0, 0)
    for position, word in enumerate(label.split()):
        if word.startswith(typed):
            return (1, position)
    return (2, 0) if typed in label else None


def _ranked(question: questionary.Question) -> InquirerControl:
    """Swap the ranked filter into a questionary list (it adds no state, only the property),
    and let its long entries wrap."""
    window = next(
        w
        for w in question.application.layout.find_all_windows()
        if isinstance(w.content, InquirerControl)
    )
    window.content.__class__ = _RankedControl
    fit.wrap_entries(window)
    return window.content


def _rank_and_guard(question: questionary.Question) -> None:
    """Rank the filter's matches, and make Enter do nothing while the typed text matches no
    entry (questionary would pick from the unfiltered list)."""
    control = _ranked(question)

    def no_match() -> bool:
        typed = (control.search_filter or "").lower()
        return bool(typed) and all(
            _match_rank(str(c.title).lower(), typed) is None for c in control.choices
        )

    bindings = question.application.key_bindings
    assert isinstance(bindings, KeyBindings)
    bindings.add(Keys.ControlM, eager=True, filter=Condition(no_match))(lambda event: None)


def select(
    message: str,
    choices: Sequence[tuple[str, T]],
    default: T | None = None,
    note: str | None = None,
) -> T:
    """Pick one of (label, value) pairs: arrows and Enter, or type part of a label first."""
    return ask(select_question(message, choices, default, note))


def checkbox(
    message: str,
    labels: Sequence[str],
    checked: Sequence[str] = (),
    check: Callable[[list[str]], str | None] | None = None,
    note: str | None = None,
) -> list[str]:
    """Pick any of `labels` (Space ticks, Enter accepts, typing filters); re-asked while `check`
    objects.

    questionary's own `validate=` for checkboxes draws an empty toolbar instead of the message
    (questionary 2.1), so the problem is printed and the question asked again.
    """
    while True:
        items = [questionary.Choice(t, value=t, checked=t in checked) for t in labels]
        question = questionary.checkbox(
            headline(message, note),
            items,
            instruction=CHECKBOX_HINT,
            use_jk_keys=False,
            use_search_filter=True,
        )
        _ranked(question)
        picked = ask(question)
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
    note: str | None = None,
) -> list[str]:
    """Several names: comma-separated in one answer, or (blank answer) one at a time, so a
    name containing a comma can still be entered."""
    how = "Comma-separated; leave empty to enter them one at a time."
    while True:
        line = text(what, default=", ".join(default), note=f"{note} {how}" if note else how)
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
