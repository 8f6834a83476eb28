"""The cap options of `llm-sim run` and the sweep runner commands, and what a command says and
how it exits when a cap stops it."""

from __future__ import annotations

import click

from simulator.cli.context import AppContext
from simulator.domain.budget import CAP_REACHED_EXIT, Caps, describe_spend
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
