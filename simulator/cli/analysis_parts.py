"""What a world tells `llm-sim measures`, and the display every world's measures share.

Each world's `cli/analysis.py` is a module with `print_measures` (the registry's
`part(kind, "cli.analysis")`); the command calls it instead of naming a world. A world's
measures differ (a chat's conversations with the prison paper's tables, a grid's runs with its
party, a network's rounds beside their theory twins), but every world prints its cells the same
way: mean [95% CI] per cell, in a table where it fits the screen, else one block per cell.
`export` needs nothing here: every world's files are listed alike (`print_files`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rich.console import Console
from rich.table import Table
from rich.text import Text

from simulator.analysis.scope import Scope
from simulator.cli.context import AppContext
from simulator.cli.transcript_view import natural_width
from simulator.domain.invisible_chars import visible
from simulator.errors import UserError


@dataclass(frozen=True)
class MeasuresRequest:
    """What `llm-sim measures` was asked: the measures to show (none: the world's defaults),
    the prison paper's options (a chat's: --labels, --paper, --table) and --json."""

    chosen: tuple[str, ...] = ()
    labels: str | None = None
    paper_only: bool = False
    table_keys: tuple[str, ...] = ()
    as_json: bool = False


class WorldMeasuresCommand(Protocol):
    def print_measures(self, app: AppContext, scope: Scope, request: MeasuresRequest) -> None:
        """Print (or, with --json, write as JSON) the scope's measures per cell and per run."""


def commands_of(kind: str) -> WorldMeasuresCommand:
    """The world `kind`'s measures command part (imported on first use)."""
    from simulator.worlds import part

    return part(kind, "cli.analysis")  # type: ignore[return-value]


def scope_info(scope: Scope, world: str = "") -> dict:
    """The scope as --json describes it; `world`: the world's word, where its outputs name
    one (a chat's do not)."""
    return {
        "kind": scope.kind,
        "id": scope.id,
        "experiment_id": scope.experiment_id,
        **({"world": world} if world else {}),
        "conversations": len(scope.conversation_ids),
    }


def print_files(
    app: AppContext, scope: Scope, world: str, fmt: str, files: list[dict], as_json: bool
) -> None:
    """The files `export` wrote: a table (table, rows, file), or JSON with the scope."""
    if as_json:
        app.print_json({"scope": scope_info(scope, world), "format": fmt, "files": files})
        return
    named = f"{world} " if world else ""
    table = Table(title=f"Exported {named}{scope.kind} {scope.id}")
    table.add_column("table")
    table.add_column("rows", justify="right")
    table.add_column("file")
    for entry in files:
        table.add_row(entry["table"], str(entry["rows"]), entry["path"])
    app.console.print(table)


def chosen_measures(
    chosen: tuple[str, ...], defaults: tuple[str, ...], available: list[str], world: str = ""
) -> list[str]:
    """The measures to show: those asked for (each one of `available`, else exit 2 listing
    them), or the defaults that are available."""
    names = list(chosen) or [m for m in defaults if m in available]
    unknown = [m for m in names if m not in available]
    if unknown:
        named = f"{world} " if world else ""
        raise UserError(
            f"unknown {named}measure {unknown[0]!r}",
            field="--measure",
            fix=f"choose from: {', '.join(available)}",
        )
    return names


def print_cells(console: Console, title: str, cells: list[dict], names: list[str]) -> None:
    """The cells' measures `names` as one table where it fits the screen, else one block per
    cell (a table squeezed into the screen cuts labels until cells look alike)."""
    table = measures_table(title, cells, names)
    if natural_width(console, table) <= console.width:
        console.print(table)
    else:
        print_per_cell(console, title, cells, names)


def _start(cell: dict) -> str:
    """Where a cell's conversations are measured from: a fork's point, else the start."""
    return cell.get("fork_at") or "start"


def measures_table(title: str, cells: list[dict], names: list[str]) -> Table:
    forks = any(cell.get("fork_at") for cell in cells)  # a column only where forks are
    table = Table(title=title)
    table.add_column("cell")
    if forks:
        table.add_column("from", no_wrap=True)
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    for cell in cells:
        table.add_row(
            Text(visible(cell["label"])),
            *([_start(cell)] if forks else []),
            str(cell["n"]),
            *(_interval(cell, name) for name in names),
        )
    return table


def print_per_cell(console: Console, title: str, cells: list[dict], names: list[str]) -> None:
    """One block per cell, its label in full on its own line(s): fits any width."""
    console.print(Text(title, style="bold", overflow="fold"))
    for cell in cells:
        console.print()
        start = f"  from {cell['fork_at']}" if cell.get("fork_at") else ""
        console.print(
            Text(visible(cell["label"]), style="bold", overflow="fold")
            + Text(f"  n={cell['n']}{start}", style="dim")
        )
        block = Table(box=None, pad_edge=False, padding=(0, 2), show_edge=False)
        block.add_column("measure", overflow="fold")
        block.add_column("mean [95% CI]", justify="right", no_wrap=True)
        for name in names:
            block.add_row(name, _interval(cell, name))
        console.print(block)


def _interval(cell: dict, name: str) -> str:
    mean, low, high = (cell.get(f"{name}_{part}") for part in ("mean", "ci_low", "ci_high"))
    if mean is None:
        return "–"
    if low is None or high is None:
        return _number(mean)
    return f"{_number(mean)} [{_number(low)}, {_number(high)}]"


def _number(value: float) -> str:
    if abs(value) < 0.0005:
        return "0"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
