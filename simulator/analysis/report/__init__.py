"""The HTML report: one self-contained file about a sweep, an experiment or a conversation.

`write_report` is what the CLI calls; `build_context` (data) and `render` (HTML) are separate so
tests and other front ends can use either half.
"""

from __future__ import annotations

from pathlib import Path

from simulator.analysis.exports import check_output_file, write_file_atomically
from simulator.analysis.report.builder import ReportContext, build_context
from simulator.analysis.report.html import render
from simulator.errors import UserError
from simulator.store.store import Store

__all__ = ["ReportContext", "build_context", "render", "render_report", "write_report"]


def render_report(
    store: Store,
    target_id: str,
    per_cell: int = 20,
    round_index: int | None = None,
    labels: str | None = None,
) -> tuple[str, ReportContext]:
    """The page as a string, with the context it was rendered from; a grid target gets the
    grid report (grid_context.py, grid_html.py) and its GridReportContext, a network target
    the network report (network_context.py, network_html.py), drawn at `round_index`."""
    from simulator.analysis.scope import resolve_scope
    from simulator.worlds.grid.domain.experiment import is_grid
    from simulator.worlds.network.domain.experiment import is_network

    scope = resolve_scope(store, target_id)
    if labels is not None and (is_network(scope.experiment) or is_grid(scope.experiment)):
        kind = (scope.experiment or {}).get("kind")
        raise UserError(
            f"outcome labels apply only to the prison paper's tables of chat conversations; "
            f"{scope.id} is a {kind} {scope.kind}",
            field="--labels",
            fix="leave --labels out",
        )
    if is_network(scope.experiment):
        from simulator.worlds.network.analysis.report.context import build_network_context
        from simulator.worlds.network.analysis.report.html import render_network

        network = build_network_context(store, scope, per_cell, round_index)
        return render_network(network), network  # type: ignore[return-value]
    if round_index is not None:  # a round is a network's; elsewhere it would be ignored
        kind = (scope.experiment or {}).get("kind") or "chat"
        raise UserError(
            f"a round to draw applies only to opinion-network reports; {scope.id} is a "
            f"{kind} {scope.kind}",
            field="--round",
            fix="leave --round out",
        )
    if is_grid(scope.experiment):
        from simulator.worlds.grid.analysis.report.context import build_grid_context
        from simulator.worlds.grid.analysis.report.html import render_grid

        grid = build_grid_context(store, scope, per_cell=per_cell)
        return render_grid(grid), grid  # type: ignore[return-value]
    ctx = build_context(store, target_id, per_cell=per_cell, scope=scope, paper_labels=labels)
    return render(ctx), ctx


def write_report(
    store: Store,
    target_id: str,
    output: Path,
    per_cell: int = 20,
    field: str = "--output",
    round_index: int | None = None,
    labels: str | None = None,
) -> ReportContext:
    """Write the page atomically, so a browser never opens a half-written report; an output
    path that cannot be written is refused before the report is built."""
    check_output_file(output, field)
    page, ctx = render_report(store, target_id, per_cell, round_index, labels)
    write_file_atomically(output, page, field)
    return ctx
