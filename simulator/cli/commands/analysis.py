"""`llm-sim export ID` (tidy tables to files) and `llm-sim measures ID` (per cell, with CIs).

Both read the target's world: its analysis part writes its tables (analysis/world_parts.py)
and its measures command prints its measures (cli/analysis_parts.py)."""

from __future__ import annotations

from pathlib import Path

import click

from simulator.analysis.exports import FORMATS, check_output_dir
from simulator.analysis.scope import resolve_scope
from simulator.analysis.spend import scope_spend
from simulator.analysis.world_parts import analysis_of
from simulator.cli.analysis_parts import MeasuresRequest, commands_of, print_files
from simulator.cli.context import AppContext
from simulator.cli.paper_tables import labels_option
from simulator.domain.budget import describe_spend
from simulator.worlds import kind_of

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")


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
    world = analysis_of(kind_of(scope.experiment))  # a grid's grid_runs and grid_steps, …
    files = world.export_tables(app.store, scope, fmt, output, labels)
    print_files(app, scope, world.WORD, fmt, files, as_json)


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
    request = MeasuresRequest(chosen, labels, paper_only, table_keys, as_json)
    commands_of(kind_of(scope.experiment)).print_measures(app, scope, request)
    if not as_json:  # what the scope's runs spent (--json: `cost` per run and cell)
        spent = describe_spend(scope_spend(app.store, scope))
        app.console.print(f"Spend: {spent}", markup=False, highlight=False)
