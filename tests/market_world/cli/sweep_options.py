"""`llm-sim sweep create` of a market experiment (simulator/cli/sweep_parts.py)."""

from __future__ import annotations

import click

from simulator.cli.params import numbers
from simulator.services.experiments import ExperimentView

NOUN = "a market experiment"
PLURAL = "market experiments"
FIX = None
OPTIONS = (
    click.Option(["--market-rounds"], metavar="N,…", help="Market rounds per cell, e.g. 2,5."),
    click.Option(
        ["--seeds"],
        metavar="N,…",
        help="One run per seed, e.g. 1,2.",
    ),
)


def spec_data(view: ExperimentView | None, data: dict, flags: dict) -> dict:
    rounds = numbers(flags.get("market_rounds"), "--market-rounds")
    seeds = numbers(flags.get("seeds"), "--seeds")
    return (
        data
        | ({} if rounds is None else {"rounds": rounds})
        | ({} if seeds is None else {"seeds": seeds})
    )
