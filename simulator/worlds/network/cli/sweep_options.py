"""`llm-sim sweep create` of an opinion-network experiment (cli/sweep_parts.py): the spec a
file and flags make.

Its axes (graphs, scenarios, tables, rounds) are lists of mappings and names, so they come
from the YAML file; --seeds and the flags every sweep takes (--llm, --seed, --repetitions,
--name) go over it. A flag of another world is refused, never dropped."""

from __future__ import annotations

import click
from pydantic import BaseModel

from simulator.cli.params import numbers
from simulator.cli.sweep_parts import sweep_spec
from simulator.services.experiments import ExperimentView

NOUN = "an opinion-network experiment"
PLURAL = "opinion-network experiments"
FIX = (
    "leave them out; a network sweep takes a YAML file (graphs, scenarios, agents, rounds, "
    "theory) and --llm, --seeds, --seed, --repetitions and --name"
)

OPTIONS = (
    click.Option(
        ["--seeds"],
        metavar="N,…",
        help="One run per seed, e.g. 1,2 (each seeds the sampling and the theory's updates).",
    ),
)


def spec_data(view: ExperimentView | None, data: dict, flags: dict) -> dict:
    seeds = numbers(flags.get("seeds"), "--seeds")
    return data if seeds is None else data | {"seeds": seeds}


def network_sweep_spec(file: str | None, flags: dict) -> BaseModel:
    """The file's spec with the flags over it."""
    return sweep_spec("network", file, flags)
