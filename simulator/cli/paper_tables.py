"""The prison paper's tables in the terminal: one compact table each, fitted to the width.

Each table is titled with the paper's numbering ("Table 2", "Figure 5") and its key (what
`--table` picks); its rows show the group's factors, the value with its 95% interval, and n.
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.text import Text

from simulator.analysis.prison_paper.measures import PaperTables
from simulator.analysis.prison_paper.table import PaperRow, PaperTable
from simulator.cli.fit_table import Column, fitted_table
from simulator.errors import UserError

# `measures`, `export` and `report` read the paper's tables from the same outcome labels
labels_option = click.option(
    "--labels",
    metavar="SOURCE",
    help="The outcome labels of the prison paper's tables, e.g. label:adjudicated or "
    "judge:prison_goal; default: label:adjudicated if present, else judge:prison_goal.",
)


def number(value: float | None, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "count":
        return f"{value:.0f}"
    if kind == "percent":
        return f"{value:.1f}"
    return f"{value:.3g}" if abs(value) >= 0.0005 else "0"


def value_text(table: PaperTable, row: PaperRow) -> str:
    """`12.5 [5.1, 27.3]`: the value and its 95% interval where it has one."""
    shown = number(row.value, table.value_kind)
    if row.value is None or row.ci_low is None or row.ci_high is None:
        return shown
    low, high = number(row.ci_low, table.value_kind), number(row.ci_high, table.value_kind)
    return f"{shown} [{low}, {high}]"


def pick(found: PaperTables, keys: tuple[str, ...]) -> list[PaperTable]:
    """The tables named by `--table` (all when none is named); exit 2 for an unknown key."""
    if not keys:
        return found.tables
    known = {t.key: t for t in found.tables}
    unknown = [k for k in keys if k not in known]
    if unknown:
        listed = ", ".join(known) or "none in this scope"
        raise UserError(f"unknown table {unknown[0]!r}", field="--table", fix=f"choose: {listed}")
    return [known[k] for k in keys]


def print_paper_tables(console: Console, found: PaperTables, tables: list[PaperTable]) -> None:
    if not found.tables:
        if found.applies or found.labels:
            console.print(Text(f"The paper's tables: none ({found.note}).", overflow="fold"))
        return
    console.print()
    console.print(
        Text(f"The paper's tables, outcomes from {found.labels}", style="bold", overflow="fold")
    )
    for table in tables:
        console.print()
        columns = [Column(g, g, shrink_to=10, drop=None) for g in table.group_by]
        columns += [Column("value", f"{table.value_kind} [95% CI]"), Column("n", "n")]
        rows = [
            {
                **{g: str(row.group.get(g, "")) for g in table.group_by},
                "value": value_text(table, row),
                "n": str(row.n),
            }
            for row in table.rows
        ]
        title = f"{table.paper_ref}: {table.title} ({table.key})"
        console.print(Text(title, style="bold", overflow="fold"))
        console.print(fitted_table("", columns, rows, console.width))
        if table.note:
            console.print(Text(table.note, style="dim", overflow="fold"))
