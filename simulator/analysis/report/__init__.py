"""The HTML report: one self-contained file about a sweep, an experiment or a conversation.

`write_report` is what the CLI calls; `build_context` (data) and `render` (HTML) are separate so
tests and other front ends can use either half.
"""

from __future__ import annotations

import os
from pathlib import Path

from simulator.analysis.report.builder import ReportContext, build_context
from simulator.analysis.report.html import render
from simulator.store.store import Store

__all__ = ["ReportContext", "build_context", "render", "render_report", "write_report"]


def render_report(store: Store, target_id: str, per_cell: int = 20) -> tuple[str, ReportContext]:
    """The page as a string, with the context it was rendered from."""
    ctx = build_context(store, target_id, per_cell=per_cell)
    return render(ctx), ctx


def write_report(store: Store, target_id: str, output: Path, per_cell: int = 20) -> ReportContext:
    """Write the page atomically, so a browser never opens a half-written report."""
    page, ctx = render_report(store, target_id, per_cell)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.name}.{os.getpid()}.tmp")  # open() honours the umask
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, output)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return ctx
