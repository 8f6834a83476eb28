"""`llm-sim run` of a grid experiment: its flags, header, live field and result."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import click

from simulator.cli.context import AppContext
from simulator.cli.interrupts import StoppedRuns, run_until_stopped
from simulator.cli.live import run_access
from simulator.cli.run_result import print_run_json
from simulator.domain.plural import count
from simulator.errors import UserError
from simulator.services.experiments import ExperimentView
from simulator.worlds.chat.engine.run import llm_name
from simulator.worlds.chat.services.runs import RunOutcome
from simulator.worlds.grid.cli.live import GridLiveView
from simulator.worlds.grid.domain.experiment import GridSpec
from simulator.worlds.grid.services import runs as grid_runs


def grid_options(command: Callable) -> Callable:
    """The world flags of a grid run; each overrides the experiment's value."""
    for name, text in reversed(
        (
            ("--steps", "Grid: steps to run (default: the experiment's)."),
            ("--radius", "Grid: message range, Chebyshev distance (default: the experiment's)."),
            ("--width", "Grid: field width (default: the experiment's)."),
            ("--height", "Grid: field height (default: the experiment's)."),
        )
    ):
        command = click.option(name, type=click.IntRange(min=0), help=text)(command)
    return command


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


def refuse_chat_flags(
    given: dict[str, object], speaker: str, days: int, counting: str, repeat: bool
) -> None:
    """A chat flag on a grid run would be silently ignored: refuse it instead."""
    named = [flag for flag, value in given.items() if value not in (None, ())]
    named += ["--speaker"] if speaker != "round_robin" else []
    named += ["--days"] if days != 1 else []
    named += ["--message-counting"] if counting != "agent_turns" else []
    named += ["--allow-repeat-speaker"] if repeat else []
    if named:
        raise UserError(
            f"{', '.join(named)} belong to group chats; this is a grid experiment",
            field=named[0],
            fix="leave them out; a grid run takes --agents N, --steps, --radius, --width, "
            "--height, --llm and --seed",
        )


def refuse_grid_flags(given: dict[str, int | None]) -> None:
    named = [flag for flag, value in given.items() if value is not None]
    if named:
        raise UserError(
            f"{', '.join(named)} belong to grid experiments; this is a group chat",
            field=named[0],
            fix="leave them out, or run a grid experiment (kind: grid)",
        )


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
    """Preflight the model, store the run, run it live."""
    spec = grid_runs.build_spec(view, llm=llm, seed=seed, world=world)
    live = GridLiveView.for_output(app.console, as_json)
    llms = run_access(app.err, as_json, pools)
    runs = StoppedRuns(live)

    async def go(stop: asyncio.Event) -> RunOutcome:
        try:
            await grid_runs.preflight(spec, llms)
            doc = grid_runs.create(app.store, view, spec, app.user)
            runs.add(doc["_id"])
            return await grid_runs.run(app.store, doc["_id"], llms, on_event=runs, stop=stop)
        finally:
            live.close()
            await llms.aclose()

    if not as_json:
        print_header(app, spec)
    outcome = run_until_stopped(go, app.err, runs)
    if as_json:
        print_run_json(app, outcome, "grid")
    return outcome
