"""How the screens show a 2D community (simulator/cli/view_parts.py): its world and prompt
templates, a run step by step, and its menus."""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.cli.transcript_view import shown, stored_count, unit_rows
from simulator.cli.view_parts import CreateFlow, MenuEntry
from simulator.domain.limits import MAX_SEED
from simulator.domain.plural import count
from simulator.services.experiments import ExperimentView
from simulator.worlds.grid.domain.experiment import MAX_GRID_AGENTS, MAX_GRID_SIDE, MAX_GRID_STEPS


def roles_cell(view: ExperimentView) -> str:
    w = view.experiment.world
    return f"grid: {count(w.agents, 'agent')}, {w.width}x{w.height}, radius {w.radius}"


def detail(view: ExperimentView) -> list[RenderableType]:
    return grid_detail(view.experiment)


def grid_detail(exp) -> list[RenderableType]:
    """A grid experiment's world and its three prompt templates."""
    w = exp.world
    where = "given cells" if w.positions is not None else "random cells (from the run's seed)"
    parts: list[RenderableType] = [
        Text(
            f"kind grid: {count(w.agents, 'agent')} on {w.width} x {w.height}"
            f"{' torus' if w.torus else ' (bounded)'}, message radius {w.radius}, "
            f"{count(w.steps, 'step')}, {where}; initial memory {w.initial_memory!r}"
        )
    ]
    for stage in ("message", "memory", "move"):
        parts.append(Panel(escape(getattr(exp.prompts, stage)), title=f"{stage} prompt"))
    return parts


def listing_cells(doc: dict) -> dict[str, str]:
    """Agents, steps done, the world in place of the speaker."""
    world = doc["spec"]["world"]
    done = stored_count(doc) // max(world["agents"], 1)
    return {
        "agents": f"{world['agents']} on a grid",
        "messages": f"step {done}/{world['steps']}",
        "days": "-",
        "speaker": f"grid r={world['radius']}",
    }


def run_line(run: dict) -> str:
    world = run["spec"]["world"]
    return (
        f"grid: {count(world['agents'], 'agent')} on {world['width']} x {world['height']}, "
        f"radius {world['radius']}, {count(world['steps'], 'step')}; model "
        f"{escape(run['spec']['llm']['model'])}"
    )


def show_rows(console: Console, data: dict) -> None:
    """Step by step: each agent's cells, move, who heard it, message and memory."""
    for row in unit_rows(console, data, "step"):
        (x0, y0), (x1, y1) = row["position_before"], row["position_after"]
        flag = " [red](a fallback: the reply named no move)[/]" if row.get("move_fallback") else ""
        move = "-" if row.get("move_fallback") else row["move"]
        heard = ", ".join(row["heard_from"]) or "nobody"
        console.print(
            f"[bold cyan]{shown(row['agent'])}[/] ({x0},{y0}) {move} -> ({x1},{y1}){flag}"
            f" [dim]heard {escape(heard)}[/]"
        )
        console.print(f"  message: {shown(row['message'])}")
        console.print(f"  [dim]memory: {shown(row['memory'])}[/]")


def perform_grid(app: AppContext, view: ExperimentView) -> None:
    """One grid run, its world numbers offered with the experiment's values."""
    from simulator.worlds.grid.cli.run import run_grid_cli

    world = view.experiment.world
    choices = [(llm.key, llm.key) for llm in view.experiment.llms]
    llm = ask.select("Model", choices) if len(choices) > 1 else choices[0][1]
    changes = {
        "agents": ask.ask_int("Number of agents", 1, MAX_GRID_AGENTS, world.agents),
        "steps": ask.ask_int("Steps", 1, MAX_GRID_STEPS, world.steps),
        "radius": ask.ask_int("Message range", 0, 2 * MAX_GRID_SIDE, world.radius),
    }
    seed = ask.ask_int("Seed, blank for none", 0, MAX_SEED, None, optional=True)
    run_grid_cli(app, view, llm=llm, seed=seed, world=changes, as_json=False)


def _create(app: AppContext) -> None:
    from simulator.worlds.grid.cli.create_menu import run_create_grid

    run_create_grid(app)


CREATE = (CreateFlow("Create 2D grid experiment (Takata et al.)", _create),)
RUN_ENTRIES = (MenuEntry("Perform a grid run", perform_grid),)
