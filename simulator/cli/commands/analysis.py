"""`llm-sim export ID` (tidy tables to files) and `llm-sim measures ID` (per cell, with CIs)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from simulator.analysis.exports import FORMATS, check_output_dir, write_tables
from simulator.analysis.measures import MEASURES
from simulator.analysis.prison_paper.measures import PaperTables, export_rows, paper_tables
from simulator.analysis.scope import resolve_scope
from simulator.analysis.streaming import export_scope, measure_scope
from simulator.cli.context import AppContext
from simulator.cli.paper_tables import labels_option, pick, print_paper_tables
from simulator.cli.transcript_view import natural_width
from simulator.domain.invisible_chars import visible
from simulator.errors import UserError
from simulator.worlds.grid.cli.analysis import export_grid_scope, print_grid_measures
from simulator.worlds.grid.domain.experiment import is_grid
from simulator.worlds.network.cli.analysis import export_network_scope, print_network_measures
from simulator.worlds.network.domain.experiment import is_network

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")
PAPER_TABLES = "paper_tables"
DEFAULT_MEASURES = (
    "words",
    "trimmed_share",
    "empty_share",
    "refusal_share",
    "repetition_share",
    "failed",
    "latency_s",
    "tokens_out",
)


def _scope_info(scope) -> dict:
    return {
        "kind": scope.kind,
        "id": scope.id,
        "experiment_id": scope.experiment_id,
        "conversations": len(scope.conversation_ids),
    }


@click.command("export")
@click.argument("target_id", metavar="EXP_ID|SWEEP_ID|CONV_ID")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default="jsonl",
    show_default=True,
    help="File format of the tables: JSON lines, CSV, or Parquet (with the analysis extra).",
)
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    type=click.Path(path_type=Path),  # checked by check_output_dir: one clear paragraph
    help="Folder for conversations, messages, summaries, calls and scores files.",
)
@labels_option
@json_option
@click.pass_obj
def export_cmd(
    app: AppContext, target_id: str, fmt: str, output: Path, labels: str | None, as_json: bool
) -> None:
    """Export tidy tables of an experiment, a sweep or one conversation (see docs/analysis.md).

    Conversations with the prison paper's factors and outcome labels also get `paper_tables`:
    one row per row of the paper's recomputed tables (key, paper_ref, the group's factors,
    value, n, ci_low, ci_high)."""
    check_output_dir(output)  # before the work: a bad path costs nothing
    scope = resolve_scope(app.store, target_id)
    if is_network(scope.experiment):  # network_runs, network_rounds, their round measures
        return export_network_scope(app, scope, fmt, output, as_json)
    if is_grid(scope.experiment):  # grid_runs and grid_steps instead of the chat tables
        return export_grid_scope(app, scope, fmt, output, as_json)
    found = paper_tables(app.store, scope, labels)  # before the files: a bad --labels exits 2
    files = export_scope(app.store, scope, fmt, output)  # batch by batch: memory stays flat
    if found.tables:
        rows = export_rows(found)
        (path,) = write_tables({PAPER_TABLES: rows}, fmt, output)
        files.append({"table": PAPER_TABLES, "path": str(path), "rows": len(rows)})
    if as_json:
        app.print_json({"scope": _scope_info(scope), "format": fmt, "files": files})
        return
    table = Table(title=f"Exported {scope.kind} {scope.id}")
    table.add_column("table")
    table.add_column("rows", justify="right")
    table.add_column("file")
    for entry in files:
        table.add_row(entry["table"], str(entry["rows"]), entry["path"])
    app.console.print(table)


@click.command("measures")
@click.argument("target_id", metavar="SWEEP_ID|EXP_ID|CONV_ID")
@click.option(
    "--measure",
    "chosen",
    multiple=True,
    metavar="NAME",
    help="A measure to show (repeatable), e.g. words_Guard; default: a standard set.",
)
@labels_option
@click.option(
    "--paper",
    "paper_only",
    is_flag=True,
    help="Show only the prison paper's tables (where the scope has them), not the cells.",
)
@click.option(
    "--table",
    "table_keys",
    multiple=True,
    metavar="KEY",
    help="Show only this paper table (repeatable, e.g. failures_by_model); implies --paper.",
)
@json_option
@click.pass_obj
def measures_cmd(
    app: AppContext,
    target_id: str,
    chosen: tuple[str, ...],
    labels: str | None,
    paper_only: bool,
    table_keys: tuple[str, ...],
    as_json: bool,
) -> None:
    """Built-in measures per cell: mean and 95% confidence interval over repetitions.

    Conversations with the prison paper's factors and outcome labels (its imported release, or
    runs scored with --scorer judge:prison_goal) also get the paper's tables and figures,
    recomputed with n and 95% intervals: printed after the cells (--paper: alone), and under
    "paper" in --json."""
    scope = resolve_scope(app.store, target_id)
    if is_network(scope.experiment):  # per round, per run with its theory twin, per cell
        return print_network_measures(app, scope, chosen, as_json)
    if is_grid(scope.experiment):  # moves, clusters, hashtags, diversity per run and cell
        return print_grid_measures(app, scope, chosen, as_json)
    found = paper_tables(app.store, scope, labels)
    shown = pick(found, table_keys)
    if paper_only or table_keys:
        if as_json:
            app.print_json(_paper_json(scope, found, shown))
        else:
            print_paper_tables(app.console, found, shown)
        return
    measured = measure_scope(app.store, scope)  # batch by batch: a few numbers per conversation
    cells = measured.cells()
    if as_json:
        _print_json_streamed(
            {
                "scope": _scope_info(scope),
                "measures": MEASURES,
                "cells": cells,
                "conversations": _Rows(measured.rows, len(measured)),
                **_paper_json(scope, found, shown, with_scope=False),
            }
        )
        return
    _print_cells(app, scope, cells, chosen)
    print_paper_tables(app.console, found, shown)


def _paper_json(scope, found: PaperTables, shown: list, with_scope: bool = True) -> dict:
    return {
        **({"scope": _scope_info(scope)} if with_scope else {}),
        "paper": [t.as_dict() for t in shown],
        "paper_labels": found.labels,
        "paper_note": found.note,
    }


def _print_cells(app: AppContext, scope, cells: list[dict], chosen: tuple[str, ...]) -> None:
    if not cells:
        app.console.print(f"No conversations in {scope.kind} {scope.id} yet.")
        return
    available = [k.removesuffix("_mean") for k in cells[0] if k.endswith("_mean")]
    names = list(chosen) or [m for m in DEFAULT_MEASURES if m in available]
    unknown = [m for m in names if m not in available]
    if unknown:
        raise UserError(
            f"unknown measure {unknown[0]!r}",
            field="--measure",
            fix=f"choose from: {', '.join(available)}",
        )
    title = f"Measures of {scope.kind} {scope.id}: mean [95% CI] per cell"
    table = measures_table(title, cells, names)
    console = app.console
    if natural_width(console, table) <= console.width:
        console.print(table)
    else:  # too wide: a table squeezed into the screen cuts labels until cells look alike
        print_per_cell(console, title, cells, names)


class _Rows(list):
    """A list the JSON encoder walks without holding it: rows are made one at a time."""

    def __init__(self, make: Callable[[], Iterator[dict]], count: int):
        super().__init__()
        self._make, self._count = make, count

    def __iter__(self) -> Iterator[dict]:
        return self._make()

    def __len__(self) -> int:
        return self._count


def _print_json_streamed(data: dict) -> None:
    """What `AppContext.print_json` prints (same text), written chunk by chunk: the encoder
    with an indent is the pure-Python one, which iterates lists lazily."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, default=str)
    for chunk in encoder.iterencode(data):
        sys.stdout.write(chunk)
    sys.stdout.write("\n")
    sys.stdout.flush()


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
