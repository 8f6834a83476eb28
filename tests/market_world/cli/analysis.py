"""`llm-sim measures` on a market target (simulator/cli/analysis_parts.py)."""

from __future__ import annotations

from market_world.analysis import world
from simulator.analysis.scope import Scope
from simulator.cli.analysis_parts import MeasuresRequest, chosen_measures, print_cells, scope_info
from simulator.cli.context import AppContext


def print_measures(app: AppContext, scope: Scope, request: MeasuresRequest) -> None:
    names = chosen_measures(request.chosen, world.MEASURES, list(world.MEASURES), "market")
    found = world.measures(app.store, scope)
    if request.as_json:
        app.print_json({"scope": scope_info(scope, "market"), **found})
        return
    title = f"Market measures of {scope.kind} {scope.id}: mean [95% CI] per cell"
    print_cells(app.console, title, found["cells"], names)
