"""The toy world's `sweep create` flags: one of its own, and --seeds as the grid takes it."""

from __future__ import annotations

import click

NOUN = "a toy experiment"
PLURAL = "toy experiments"
FIX = None

OPTIONS = (
    click.Option(["--tides"], metavar="N,…", help="Tides to try."),
    click.Option(["--seeds"], metavar="N,…", help="One run per seed."),
)


def spec_data(view, data: dict, flags: dict) -> dict:
    return data
