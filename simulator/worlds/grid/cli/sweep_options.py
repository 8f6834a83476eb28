"""`llm-sim sweep create` flags of grid experiments (cli/sweep_parts.py), and the spec they
make with a sweep file."""

from __future__ import annotations

import click

from simulator.cli.params import numbers
from simulator.cli.sweep_parts import names_list
from simulator.services.experiments import ExperimentView

NOUN = "a grid experiment"
PLURAL = "grid experiments"
FIX = (
    "leave them out; a grid sweep takes --llm, --agents, --steps, --radius, --memory, --seeds, "
    "--seed, --repetitions and --name"
)

OPTIONS = (
    click.Option(["--agents"], metavar="N,…", help="Agent counts to try, e.g. 10,50."),
    click.Option(["--radius"], metavar="N,…", help="Message ranges to try, e.g. 0,5,25."),
    click.Option(["--steps"], metavar="N,…", help="Step counts to try, e.g. 5,100."),
    click.Option(
        ["--seeds"],
        metavar="N,…",
        help="One run per seed, e.g. 1,2 (each seed places the agents and seeds the sampling).",
    ),
    click.Option(
        ["--memory"],
        metavar="LEVEL,…",
        help="Memory levels to try over the experiment's memory block, e.g. "
        "full,no_reflection,no_memory,summary.",
    ),
)


def spec_data(view: ExperimentView | None, data: dict, flags: dict) -> dict:
    overrides = {
        "agents": numbers(flags.get("agents"), "--agents"),
        "steps": numbers(flags.get("steps"), "--steps"),
        "radius": numbers(flags.get("radius"), "--radius"),
        "seeds": numbers(flags.get("seeds"), "--seeds"),
        "memory": names_list(flags.get("memory"), "--memory", "full,no_memory"),
    }
    return data | {k: v for k, v in overrides.items() if v is not None}
