"""`llm-sim report TARGET -o report.html`: a self-contained HTML report to read or share."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from simulator.cli.context import AppContext
from simulator.cli.paper_tables import labels_option
from simulator.domain.plural import count


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
    help="Conversations per cell to include in the transcript browser (a grid: runs "
    "replayed; an opinion network: runs drawn beside their theory twins).",
)
@click.option(
    "--round",
    "round_index",
    type=int,
    default=None,
    help="Opinion networks: the round the graphs are drawn at (default: the last).",
)
@labels_option
@click.option("--open", "open_it", is_flag=True, help="Open the report in a web browser.")
@click.pass_obj
def report(
    app: AppContext,
    target_id: str,
    output: Path,
    transcripts_per_cell: int,
    round_index: int | None,
    labels: str | None,
    open_it: bool,
) -> None:
    """Write one HTML file: experiment, plan and status, measures, plots and transcripts."""
    from simulator.analysis.report import write_report

    with app.err.status("building the report…"):
        ctx = write_report(
            app.store,
            target_id,
            output,
            per_cell=transcripts_per_cell,
            round_index=round_index,
            labels=labels,
        )
    app.console.print(  # what the page shows is the world's to say ("4 transcripts")
        f"wrote {output} ({output.stat().st_size // 1024} KiB, {count(len(ctx.cells), 'cell')}, "
        f"{ctx.shown()})"
    )
    if open_it:
        webbrowser.open(output.resolve().as_uri())
