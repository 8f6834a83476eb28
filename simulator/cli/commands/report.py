"""`llm-sim report TARGET -o report.html`: a self-contained HTML report to read or share."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from simulator.analysis.scope import resolve_scope
from simulator.cli.context import AppContext
from simulator.domain.network_experiment import is_network
from simulator.errors import UserError


@click.command("report")
@click.argument("target_id", metavar="SWEEP_ID|EXPERIMENT_ID|CONVERSATION_ID")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),  # checked by write_report: one clear paragraph
    default=Path("report.html"),
    show_default=True,
    help="The HTML file to write.",
)
@click.option(
    "--transcripts-per-cell",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Conversations per cell to include in the transcript browser.",
)
@click.option("--open", "open_it", is_flag=True, help="Open the report in a web browser.")
@click.pass_obj
def report(
    app: AppContext, target_id: str, output: Path, transcripts_per_cell: int, open_it: bool
) -> None:
    """Write one HTML file: experiment, plan and status, measures, plots and transcripts."""
    from simulator.analysis.report import write_report

    if is_network(resolve_scope(app.store, target_id).experiment):
        raise UserError(
            "reports of opinion-network experiments are not built yet (issue 12)",
            field="TARGET_ID",
            fix="read a run with 'llm-sim conversation show RUN_ID' (or --json)",
        )
    with app.err.status("building the report…"):
        ctx = write_report(app.store, target_id, output, per_cell=transcripts_per_cell)
    shown = len(ctx.transcripts["conversations"])
    app.console.print(
        f"wrote {output} ({output.stat().st_size // 1024} KiB, {len(ctx.cells)} cells, "
        f"{shown} transcripts)"
    )
    if open_it:
        webbrowser.open(output.resolve().as_uri())
