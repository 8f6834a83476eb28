"""`llm-sim run` of a grid experiment: its flags, header and live field."""

from __future__ import annotations

from typing import Any

import click

from simulator.cli.context import AppContext
from simulator.cli.run_parts import RunChoices, plan_and_execute
from simulator.domain.llm_display import llm_name
from simulator.domain.plural import count
from simulator.engine.gc_budget import fewer_collections
from simulator.errors import UserError
from simulator.services.experiments import ExperimentView
from simulator.services.runs import RunOutcome
from simulator.worlds.grid.cli.live import GridLiveView
from simulator.worlds.grid.domain.experiment import GridSpec

GROUP = "2D community options"
THIS = "a grid experiment"
THESE = "grid experiments"
TAKES = "a grid run takes --agents N, --steps, --radius, --width, --height, --llm and --seed"

OPTIONS = (
    click.Option(
        ["--agents"],
        metavar="N",
        help="The number of agents (default: the experiment's).",
    ),
    *(
        click.Option([flag], type=click.IntRange(min=0), help=text)
        for flag, text in (
            ("--steps", "Steps to run (default: the experiment's)."),
            ("--radius", "Message range, Chebyshev distance (default: the experiment's)."),
            ("--width", "Field width (default: the experiment's)."),
            ("--height", "Field height (default: the experiment's)."),
        )
    ),
)


def grid_agents(agents: str | None) -> int | None:
    """`--agents 10` for a grid; the chat's ROLE=N form is refused with the reason."""
    if agents is None:
        return None
    text = agents.strip()
    if not text.isascii() or not text.isdigit():
        raise UserError(
            f"{agents!r} is not a number of agents; a grid experiment has no roles",
            field="--agents",
            fix="give the number of agents, e.g. --agents 10",
        )
    return int(text)


def print_header(app: AppContext, spec: GridSpec) -> None:
    """What will run, including every value the tool chose because nobody said."""
    w = spec.world
    line = (
        f"grid: {count(w.agents, 'agent')} on {w.width} x {w.height}"
        f"{' torus' if w.torus else ''}, message radius {w.radius}, {count(w.steps, 'step')} "
        f"({count(spec.calls, 'call', thousands=True)}: "
        + (
            "message, memory and move per agent per step)"
            if spec.memory.kind == "summary"
            else "message and move per agent per step"
            + (
                ", plus the memory stream's ratings and reflections)"
                if spec.memory.is_stream
                else ")"
            )
        )
    )
    if spec.memory.kind != "summary":
        app.err.print(f"memory: {spec.memory.describe()}", markup=False, highlight=False)
    app.err.print(line, markup=False, highlight=False)
    app.err.print(f"model: {llm_name(spec.llm)}", markup=False, highlight=False)
    if spec.seed is not None:  # the run's seed, not the LLM entry's own (it replaces it)
        app.err.print(
            f"seed: {spec.seed} (the random cells; every model call's seed is derived from it)",
            markup=False,
            highlight=False,
        )
    if spec.probe is not None:
        app.err.print(f"probe: {probe_line(spec)}", markup=False, highlight=False)
    if spec.personality is not None:
        test = spec.personality.describe(w.agents)
        app.err.print(f"personality: {test}", markup=False, highlight=False)
    for note in spec.defaults_applied:
        app.err.print(f"default: {note}", markup=False, highlight=False)


def probe_line(spec: GridSpec) -> str:
    """What the probe asks after the last step and what it reads from the run."""
    probe, agents = spec.probe, spec.world.agents
    assert probe is not None
    parts = []
    if probe.news:
        parts.append(f"every agent asked {probe.news.question!r} after the last step")
    if probe.relationships:
        calls = count(agents * (agents - 1), "call", thousands=True)
        parts.append(f"every agent asked about every other ({calls})")
    if probe.attendance:
        a = probe.attendance
        parts.append(
            f"attendance within {a.radius} of ({a.place[0]}, {a.place[1]}) from {a.start} to "
            f"{a.end} on day {a.day}"
        )
    return "; ".join(parts) or "nothing asked"


def run(
    app: AppContext, view: ExperimentView, options: dict[str, Any], choices: RunChoices
) -> RunOutcome:
    """Plan the grid run (`agents` a number; the other options fields of the experiment's
    world), run it live."""
    world = {**options, "agents": grid_agents(options.get("agents"))}
    with fewer_collections():  # planning reads every agent too (engine/gc_budget.py)
        return plan_and_execute(app, view, world, choices)


def live_view(app: AppContext, as_json: bool) -> GridLiveView:
    return GridLiveView.for_output(app.console, as_json)


def run_grid_cli(
    app: AppContext,
    view: ExperimentView,
    *,
    llm: str | None,
    seed: int | None,
    world: dict,
    as_json: bool,
    pools: dict[str, int] | None = None,
) -> RunOutcome:
    """Plan the grid run with the world's values over the experiment's, run it live (the
    menus' way in)."""
    with fewer_collections():  # planning reads every agent too (engine/gc_budget.py)
        return plan_and_execute(app, view, world, RunChoices(llm, seed, as_json, pools or {}))
