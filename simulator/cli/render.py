"""Rich rendering of experiments. Only the CLI prints."""

from __future__ import annotations

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from simulator.cli.fit_table import Column, fitted_table
from simulator.domain.plural import count
from simulator.services.experiments import ExperimentView

STAR = "★"


EXPERIMENT_COLUMNS = [  # dropped on a narrow screen: created first, then owner, then roles
    Column("star", ""),
    Column("id", "id"),
    Column("name", "name", shrink_to=16),
    Column("owner", "owner", shrink_to=8, drop=2),
    Column("roles", "roles", shrink_to=14, drop=3),
    Column("created", "created", drop=1),
    Column("note", "note", shrink_to=16, drop=4),
]


def experiments_table(views: list[ExperimentView], user: str, width: int) -> Table:
    """One line per experiment within `width` cells; the note and long fields end in an
    ellipsis, ids stay whole (`--json` has every field in full)."""
    rows = [
        {
            "star": STAR if view.experiment.favourite else "",
            "id": view.id,
            "name": view.experiment.name,
            "owner": view.owner + (" (you)" if view.owner == user else ""),
            "roles": roles_cell(view),
            "created": f"{view.created_at:%Y-%m-%d %H:%M}",
            "note": view.experiment.note or "",
        }
        for view in views
    ]
    return fitted_table("Experiments", EXPERIMENT_COLUMNS, rows, width)


def roles_cell(view: ExperimentView) -> str:
    """The roles column: a chat's role names; a grid's kind and size (it has no roles)."""
    exp = view.experiment
    if view.kind == "grid":
        w = exp.world
        return f"grid: {count(w.agents, 'agent')}, {w.width}x{w.height}, radius {w.radius}"
    if view.kind == "network":
        net = exp.network
        return f"network: {net.graph.get('type')}, {count(net.rounds, 'round')}, {net.scenario}"
    return ", ".join(r.name for r in exp.roles)


def grid_detail(exp) -> list:
    """A grid experiment's world and its three prompt templates."""
    w = exp.world
    where = "given cells" if w.positions is not None else "random cells (from the run's seed)"
    parts: list = [
        Text(
            f"kind grid: {count(w.agents, 'agent')} on {w.width} x {w.height}"
            f"{' torus' if w.torus else ' (bounded)'}, message radius {w.radius}, "
            f"{count(w.steps, 'step')}, {where}; initial memory {w.initial_memory!r}"
        )
    ]
    for stage in ("message", "memory", "move"):
        parts.append(Panel(escape(getattr(exp.prompts, stage)), title=f"{stage} prompt"))
    return parts


def experiment_detail(view: ExperimentView) -> Group:
    exp = view.experiment
    head = Table.grid(padding=(0, 2))
    head.add_row("id", view.id)
    head.add_row("name", escape(exp.name) + (f" {STAR}" if exp.favourite else ""))
    head.add_row("owner", escape(view.owner))
    head.add_row("note", escape(exp.note or "-"))
    head.add_row("created", f"{view.created_at:%Y-%m-%d %H:%M:%S} UTC")
    head.add_row("updated", f"{view.updated_at:%Y-%m-%d %H:%M:%S} UTC")
    if view.duplicated_from:
        head.add_row("duplicated from", view.duplicated_from)
    head.add_row("version", view.version)
    llms = ", ".join(
        llm.model
        + (f" as {llm.label}" if llm.label else "")
        + (f" {llm.params.as_dict()}" if llm.params.as_dict() else "")
        for llm in exp.llms
    )
    head.add_row("LLMs", escape(llms))
    if view.kind == "grid":
        return Group(head, *grid_detail(exp))
    if view.kind == "network":
        net = exp.network
        graph = ", ".join(f"{k} {v}" for k, v in net.graph.items())
        return Group(
            head,
            Text(
                f"kind network: graph {graph}; agents {net.agents}; scenario {net.scenario}; "
                f"round 0 from the table, then {count(net.rounds, 'round')}"
            ),
        )
    parts: list = [head, Panel(escape(exp.starting_message), title="starting message")]
    for role in exp.roles:
        titles = ", ".join(s.title for s in role.sections)
        parts.append(Text(f"role {role.name} ({role.pronoun}): {titles}"))
    if exp.shared_sections:
        parts.append(Text("shared sections: " + ", ".join(s.title for s in exp.shared_sections)))
    if exp.summarizer_sections:
        parts.append(
            Text("summarizer sections: " + ", ".join(s.title for s in exp.summarizer_sections))
        )
    return Group(*parts)


def rendered_prompts(console: Console, prompts: dict[str, str], counts: dict[str, int]) -> None:
    label = ", ".join(count(n, role) for role, n in counts.items())
    for who, text in prompts.items():
        console.print(
            Panel(escape(text), title=f"{who} — rendered for {label}", title_align="left")
        )
