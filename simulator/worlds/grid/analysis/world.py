"""The grid's analysis part (analysis/world_parts.py): `grid_runs` and `grid_steps`, the
measures of its runs and cells, its report with replays, and its steps for the memory
browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator.analysis.scope import Scope
from simulator.memory.domain.settings import DAY_START_HOUR
from simulator.worlds.grid.domain.rules import agent_names as numbered_names

WORD = "grid"
PAPER_LABELS = False
DRAWS_ROUNDS = False
MEMORY_CARRIED = "a rolling summary each agent rewrites every step"
STREAM_DAY_START = DAY_START_HOUR * 60  # a stream runs on the day clock its plans use


def export_tables(
    store: Any, scope: Scope, fmt: str, output: Path, labels: str | None
) -> list[dict]:
    """`grid_runs` and `grid_steps` (table.py has the columns)."""
    from simulator.worlds.grid.analysis.table import export_grid

    return export_grid(store, scope.conversation_ids, fmt, output)


def measures(store: Any, scope: Scope) -> dict:
    """measures.grid_measures: moves, clusters, hashtags, diversity per run and cell."""
    from simulator.worlds.grid.analysis.measures import grid_measures

    return grid_measures(store, scope.conversation_ids)


def report_context(
    store: Any, scope: Scope, per_cell: int, round_index: int | None, labels: str | None
) -> Any:
    from simulator.worlds.grid.analysis.report.context import build_grid_context

    return build_grid_context(store, scope, per_cell=per_cell)


def render_report(ctx: Any) -> str:
    from simulator.worlds.grid.analysis.report.html import render_grid

    return render_grid(ctx)


def agent_names(doc: dict) -> list[str]:
    """agent0, agent1, … as many as its world has."""
    spec = doc.get("spec") or {}
    return numbered_names(int((spec.get("world") or {}).get("agents") or 0))


def memory_rows(store: Any, doc: dict, names: list[str]) -> list[tuple[int, int, dict]]:
    return [(r["step"], r["agent_index"], r) for r in store.grid_steps.for_run(doc["_id"])]
