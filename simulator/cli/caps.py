"""The cap options of `llm-sim run` and the sweep runner commands, and what a command says and
how it exits when a cap stops it."""

from __future__ import annotations

import click

from simulator.cli.context import AppContext
from simulator.domain.budget import CAP_REACHED_EXIT, Caps, describe_spend, money
from simulator.engine.budget import Budget

CAP_HELP = (
    f"Reaching a cap stops new calls, lets those in flight finish, leaves every run resumable "
    f"and exits with status {CAP_REACHED_EXIT}."
)


def cap_options(f):
    """--max-cost, --max-tokens, --max-calls (None: no cap)."""
    f = click.option(
        "--max-calls",
        type=click.IntRange(min=1),
        help="Stop once this many model calls were made. " + CAP_HELP,
    )(f)
    f = click.option(
        "--max-tokens",
        type=click.IntRange(min=1),
        help="Stop once this many tokens (in and out) were spent.",
    )(f)
    return click.option(
        "--max-cost",
        type=click.FloatRange(min=0, min_open=True),
        metavar="DOLLARS",
        help="Stop once this many US dollars were spent (every model needs a known price).",
    )(f)


def caps_from(max_cost: float | None, max_tokens: int | None, max_calls: int | None) -> Caps:
    return Caps(max_cost=max_cost, max_tokens=max_tokens, max_calls=max_calls)


def file_caps_line(caps: Caps | None) -> str | None:
    """The sweep file's caps as one line for the plan (None: the file gives none)."""
    if caps is None or not caps.any():
        return None
    said = []
    if caps.max_cost is not None:
        said.append(f"max_cost {money(caps.max_cost)}")
    if caps.max_tokens is not None:
        said.append(f"max_tokens {caps.max_tokens:,}")
    if caps.max_calls is not None:
        said.append(f"max_calls {caps.max_calls:,}")
    return (
        f"Caps from the sweep file: {', '.join(said)}. The sweep stops there (kept, resumable); "
        "a flag given to sweep run or resume (--max-cost, --max-tokens, --max-calls) wins."
    )


def exit_if_capped(app: AppContext, budget: Budget | None, spent: dict, resume: str) -> None:
    """After a command stopped by a cap: which cap, what was spent, how to go on; exit 3."""
    if budget is None or budget.reached is None:
        return
    app.err.print(
        f"Stopped: {budget.reached}. Spent: {describe_spend(spent)}. Everything is kept and "
        f"resumable: {resume}",
        markup=False,
        highlight=False,
    )
    raise SystemExit(CAP_REACHED_EXIT)
