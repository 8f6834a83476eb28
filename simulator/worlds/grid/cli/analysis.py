"""`llm-sim export` and `llm-sim measures` on a grid target (analysis.py dispatches here).

The grid's tables and measures differ from a chat's (analysis/grid/), but the commands, their
flags and their output shapes stay the same: files listed in a table or as JSON, measures as a
mean [95% CI] per cell, `--json` with every run's figures.
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text

from simulator.analysis.scope import Scope
from simulator.cli.context import AppContext
from simulator.errors import UserError
from simulator.worlds.grid.analysis import SUMMARY, export_grid, grid_measures

DEFAULT_GRID_MEASURES = (
    "share_stay",
    "fallbacks",
    "mean_clusters",
    "final_clusters",
    "unique_hashtags",
    "longest_hashtag_lifespan",
    "mean_message_msd",
    "hallucination_share",
)
PARTY_MEASURES = (  # shown by default when a run has a probe (the party)
    "news_known_at_start",
    "news_known",
    "news_known_share",
    "news_said_yes",
    "news_unbacked_yes",
    "news_unclear",
    "news_heard",
    "relationship_density_at_start",
    "relationship_density",
    "hallucinated_answer_share",
    "attended",
    "invited",
    "invited_attended",
)


def scope_info(scope: Scope) -> dict:
    return {
        "kind": scope.kind,
        "id": scope.id,
        "experiment_id": scope.experiment_id,
        "world": "grid",
        "conversations": len(scope.conversation_ids),
    }


def export_grid_scope(app: AppContext, scope: Scope, fmt: str, output: Path, as_json: bool) -> None:
    """`grid_runs` and `grid_steps` files (see analysis/grid/table.py for the columns)."""
    files = export_grid(app.store, scope.conversation_ids, fmt, output)
    if as_json:
        app.print_json({"scope": scope_info(scope), "format": fmt, "files": files})
        return
    table = Table(title=f"Exported grid {scope.kind} {scope.id}")
    table.add_column("table")
    table.add_column("rows", justify="right")
    table.add_column("file")
    for entry in files:
        table.add_row(entry["table"], str(entry["rows"]), entry["path"])
    app.console.print(table)


def print_grid_measures(
    app: AppContext, scope: Scope, chosen: tuple[str, ...], as_json: bool
) -> None:
    """Per cell: mean [95% CI] of the chosen SUMMARY measures; --json: cells and runs whole."""
    names = list(chosen) or list(DEFAULT_GRID_MEASURES)
    unknown = [m for m in names if m not in SUMMARY]
    if unknown:  # before the work: embedding a sweep's texts takes a while
        raise UserError(
            f"unknown grid measure {unknown[0]!r}",
            field="--measure",
            fix=f"choose from: {', '.join(SUMMARY)}",
        )
    measured = grid_measures(app.store, scope.conversation_ids)
    if not chosen:  # a probed run's party figures join the defaults
        names += [
            m
            for m in PARTY_MEASURES
            if any(c.get(f"{m}_mean") is not None for c in measured["cells"])
        ]
    if as_json:
        app.print_json({"scope": scope_info(scope), **measured})
        return
    for note in measured["notes"]:
        app.err.print(Text(f"note: {note}", style="yellow"))
    if not measured["cells"]:
        app.console.print(f"No runs in {scope.kind} {scope.id} yet.")
        return
    from simulator.cli.commands.analysis import measures_table, print_per_cell
    from simulator.cli.transcript_view import natural_width

    title = f"Grid measures of {scope.kind} {scope.id}: mean [95% CI] per cell"
    table = measures_table(title, measured["cells"], names)
    if natural_width(app.console, table) <= app.console.width:
        app.console.print(table)
    else:  # as the chat measures do: one block per cell rather than squeezed labels
        print_per_cell(app.console, title, measured["cells"], names)
