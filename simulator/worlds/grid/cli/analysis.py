"""`llm-sim measures` on a grid target (cli/analysis_parts.py).

The grid's measures differ from a chat's (its analysis/), but the command, its flags and its
output shapes stay the same: measures as a mean [95% CI] per cell, `--json` with every run's
figures.
"""

from __future__ import annotations

from rich.text import Text

from simulator.analysis.scope import Scope
from simulator.cli.analysis_parts import MeasuresRequest, chosen_measures, print_cells, scope_info
from simulator.cli.context import AppContext
from simulator.worlds.grid.analysis import SUMMARY
from simulator.worlds.grid.analysis import world as grid_analysis

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


def print_measures(app: AppContext, scope: Scope, request: MeasuresRequest) -> None:
    """Per cell: mean [95% CI] of the chosen SUMMARY measures; --json: cells and runs whole."""
    # before the work: embedding a sweep's texts takes a while
    names = chosen_measures(request.chosen, DEFAULT_GRID_MEASURES, list(SUMMARY), "grid")
    measured = grid_analysis.measures(app.store, scope)
    if not request.chosen:  # a probed run's party figures join the defaults
        names += [
            m
            for m in PARTY_MEASURES
            if any(c.get(f"{m}_mean") is not None for c in measured["cells"])
        ]
    if request.as_json:
        app.print_json({"scope": scope_info(scope, "grid"), **measured})
        return
    for note in measured["notes"]:
        app.err.print(Text(f"note: {note}", style="yellow"))
    if not measured["cells"]:
        app.console.print(f"No runs in {scope.kind} {scope.id} yet.")
        return
    title = f"Grid measures of {scope.kind} {scope.id}: mean [95% CI] per cell"
    print_cells(app.console, title, measured["cells"], names)
