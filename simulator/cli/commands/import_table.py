"""`llm-sim import table`: labelled transcripts from spreadsheets, through a mapping file."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from simulator.cli.context import AppContext
from simulator.services import table_import as service


@click.command("table")
@click.argument("mapping")
@click.option(
    "--from",
    "folder",
    type=click.Path(file_okay=False),
    default=None,
    envvar="SIM_IMPORT_FROM",
    metavar="FOLDER",
    help="The folder holding the mapping's workbooks (default: the mapping file's folder). "
    "Only read, never written.",
)
@click.option("--dry-run", is_flag=True, help="Read and check everything; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")
@click.pass_obj
def table_cmd(
    app: AppContext, mapping: str, folder: str | None, dry_run: bool, as_json: bool
) -> None:
    """Import labelled conversations from spreadsheets (.xlsx) as MAPPING describes them.

    One experiment for the mapping; one conversation per row, with its cell (the factors),
    its messages parsed from the transcript, and its labels and scores stored as scores
    (`label:SOURCE`, `score:SOURCE`). Every cell used is checked before anything is written:
    the first problem names the file, sheet, row and column (exit 2, nothing stored).
    Conversations the source marks failed are kept with status `failed`. A second import
    adds nothing. MAPPING is a YAML file or a shipped mapping's name: `prison_paper` reads
    the labelled release of the prison experiment (see prompts/mappings/prison_paper.yaml).
    """
    plan = service.plan(app.store, mapping, folder)
    if not dry_run and plan.new_rows + ([] if plan.experiment_present else [None]):
        service.apply(app.store, plan, app.user)
    if as_json:
        app.print_json(plan.to_json(dry_run))
        return
    summary = plan.to_json(dry_run)
    table = Table(
        title=escape(f"Table import: {summary['mapping']} from {summary['folder']}"),
        caption="dry run: nothing was written" if dry_run else None,
    )
    table.add_column(summary["by"] or "")
    table.add_column("conversations", justify="right")
    table.add_column("failed", justify="right")
    for key, counts in summary["counts"].items():
        table.add_row(escape(key), str(counts["conversations"]), str(counts.get("failed", 0)))
    app.console.print(table)
    verb = "would be added" if dry_run else "added"
    app.console.print(
        f"{summary['added']} {verb}, {summary['already_present']} already present "
        f"(experiment {summary['experiment_id']}; {summary['messages_added']} messages and "
        f"{summary['scores_added']} labels and scores {verb})."
    )
