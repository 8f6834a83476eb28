"""The opinion network's analysis part (analysis/world_parts.py): its runs, rounds and round
measures, the measures of its runs beside their theory twins, its report, and its rounds for
the memory browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator.analysis.scope import Scope

WORD = "network"
PAPER_LABELS = False
DRAWS_ROUNDS = True
MEMORY_CARRIED = "the answers of the round before (its own and its friends')"
STREAM_DAY_START = None


def export_tables(
    store: Any, scope: Scope, fmt: str, output: Path, labels: str | None
) -> list[dict]:
    """`network_runs`, `network_rounds` and `network_round_measures` (tables.py has the
    columns)."""
    from simulator.worlds.network.analysis.tables import export_network

    return export_network(store, scope.conversation_ids, scope.experiment_id, fmt, output)


def measures(store: Any, scope: Scope) -> dict:
    """summary.network_measures: per round, per run with its theory twin, per cell."""
    from simulator.worlds.network.analysis.summary import network_measures

    return network_measures(store, scope.conversation_ids, scope.experiment_id)


def report_context(
    store: Any, scope: Scope, per_cell: int, round_index: int | None, labels: str | None
) -> Any:
    from simulator.worlds.network.analysis.report.context import build_network_context

    return build_network_context(store, scope, per_cell, round_index)


def render_report(ctx: Any) -> str:
    from simulator.worlds.network.analysis.report.html import render_network

    return render_network(ctx)


def agent_names(doc: dict) -> list[str]:
    spec = doc.get("spec") or {}
    return [str(a.get("name")) for a in spec.get("agents") or []]


def memory_rows(store: Any, doc: dict, names: list[str]) -> list[tuple[int, int, dict]]:
    return [(r["round"], r["agent_index"], r) for r in store.network_rounds.for_run(doc["_id"])]
