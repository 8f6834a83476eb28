"""The HTML report: one self-contained file about a sweep, an experiment or a conversation.

`write_report` is what the CLI calls; `build_context` (data) and `render` (HTML) are separate so
tests and other front ends can use either half.
"""

from __future__ import annotations

from pathlib import Path

from simulator.analysis.exports import check_output_file, write_file_atomically
from simulator.analysis.report.builder import ReportContext, ReportHead, build_context
from simulator.analysis.report.html import render
from simulator.errors import UserError
from simulator.store.store import Store

__all__ = [
    "ReportContext",
    "ReportHead",
    "build_context",
    "render",
    "render_report",
    "write_report",
]


def render_report(
    store: Store,
    target_id: str,
    per_cell: int = 20,
    round_index: int | None = None,
    labels: str | None = None,
) -> tuple[str, ReportHead]:
    """The page as a string, with the context it was rendered from: the report of the target's
    world (its analysis part, analysis/world_parts.py), a network's drawn at `round_index`."""
    from simulator.analysis.scope import resolve_scope
    from simulator.analysis.world_parts import analysis_of
    from simulator.worlds import kind_of

    scope = resolve_scope(store, target_id)
    kind = kind_of(scope.experiment)
    world = analysis_of(kind)
    if labels is not None and not world.PAPER_LABELS:
        raise UserError(
            f"outcome labels apply only to the prison paper's tables of chat conversations; "
            f"{scope.id} is a {kind} {scope.kind}",
            field="--labels",
            fix="leave --labels out",
        )
    if round_index is not None and not world.DRAWS_ROUNDS:  # elsewhere it would be ignored
        raise UserError(
            f"a round to draw applies only to opinion-network reports; {scope.id} is a "
            f"{kind} {scope.kind}",
            field="--round",
            fix="leave --round out",
        )
    ctx = world.report_context(store, scope, per_cell, round_index, labels)
    return world.render_report(ctx), ctx  # type: ignore[return-value]


def write_report(
    store: Store,
    target_id: str,
    output: Path,
    per_cell: int = 20,
    field: str = "--output",
    round_index: int | None = None,
    labels: str | None = None,
) -> ReportHead:
    """Write the page atomically, so a browser never opens a half-written report; an output
    path that cannot be written is refused before the report is built."""
    check_output_file(output, field)
    page, ctx = render_report(store, target_id, per_cell, round_index, labels)
    write_file_atomically(output, page, field)
    return ctx
