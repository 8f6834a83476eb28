"""The HTML report: one self-contained file about a sweep, an experiment or a conversation.

`write_report` is what the CLI calls; `build_context` (data) and `render` (HTML) are separate so
tests and other front ends can use either half.
"""

from __future__ import annotations

from pathlib import Path

from simulator.analysis.exports import check_output_file, write_file_atomically
from simulator.analysis.report.builder import ReportContext, build_context
from simulator.analysis.report.html import render
from simulator.store.store import Store

__all__ = ["ReportContext", "build_context", "render", "render_report", "write_report"]


def render_report(store: Store, target_id: str, per_cell: int = 20) -> tuple[str, ReportContext]:
    """The page as a string, with the context it was rendered from; a grid target gets the
    grid report (grid_context.py, grid_html.py) and its GridReportContext."""
    from simulator.analysis.scope import resolve_scope
    from simulator.domain.grid_experiment import is_grid

    scope = resolve_scope(store, target_id)
    if is_grid(scope.experiment):
        from simulator.analysis.report.grid_context import build_grid_context
        from simulator.analysis.report.grid_html import render_grid

        grid = build_grid_context(store, scope, per_cell=per_cell)
        return render_grid(grid), grid  # type: ignore[return-value]
    ctx = build_context(store, target_id, per_cell=per_cell, scope=scope)
    return render(ctx), ctx


def write_report(
    store: Store, target_id: str, output: Path, per_cell: int = 20, field: str = "--output"
) -> ReportContext:
    """Write the page atomically, so a browser never opens a half-written report; an output
    path that cannot be written is refused before the report is built."""
    check_output_file(output, field)
    page, ctx = render_report(store, target_id, per_cell)
    write_file_atomically(output, page, field)
    return ctx
