"""Rich rendering of experiments. Only the CLI prints."""

from __future__ import annotations

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from simulator.cli.fit_table import Column, fitted_table
from simulator.cli.view_parts import views_of
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
    """The roles column: a chat's role names; another world's kind and size (it has no roles)."""
    return views_of(view.kind).roles_cell(view)


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
    return Group(head, *views_of(view.kind).detail(view))


def rendered_prompts(console: Console, prompts: dict[str, str], counts: dict[str, int]) -> None:
    label = ", ".join(count(n, role) for role, n in counts.items())
    for who, text in prompts.items():
        console.print(
            Panel(escape(text), title=f"{who} — rendered for {label}", title_align="left")
        )
