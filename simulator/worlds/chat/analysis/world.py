"""The group chat's analysis part (analysis/world_parts.py): the house's chat tables, measures
and report, and the prison paper's tables where the conversations have its factors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator.analysis.scope import Scope

WORD = ""  # titles and JSON name no world: a chat's outputs are the tool's oldest
PAPER_LABELS = True
DRAWS_ROUNDS = False
MEMORY_CARRIED = "the chat's transcript and its day summaries"
STREAM_DAY_START = None
PAPER_TABLES = "paper_tables"  # the export's table of the prison paper's rows


def export_tables(
    store: Any, scope: Scope, fmt: str, output: Path, labels: str | None
) -> list[dict]:
    """conversations, messages, summaries, calls and scores; with the prison paper's factors
    and outcome labels also `paper_tables` (one row per row of the paper's tables)."""
    from simulator.analysis.exports import write_tables
    from simulator.analysis.prison_paper.measures import export_rows, paper_tables
    from simulator.analysis.streaming import export_scope

    found = paper_tables(store, scope, labels)  # before the files: a bad --labels exits 2
    files = export_scope(store, scope, fmt, output)  # batch by batch: memory stays flat
    if found.tables:
        rows = export_rows(found)
        (path,) = write_tables({PAPER_TABLES: rows}, fmt, output)
        files.append({"table": PAPER_TABLES, "path": str(path), "rows": len(rows)})
    return files


def measures(store: Any, scope: Scope) -> Any:
    """Per conversation and per cell (streaming.ScopeMeasures: `rows()`, `cells()`)."""
    from simulator.analysis.streaming import measure_scope

    return measure_scope(store, scope)  # batch by batch: a few numbers per conversation


def report_context(
    store: Any, scope: Scope, per_cell: int, round_index: int | None, labels: str | None
) -> Any:
    from simulator.analysis.report.builder import build_context

    return build_context(store, scope.id, per_cell=per_cell, scope=scope, paper_labels=labels)


def render_report(ctx: Any) -> str:
    from simulator.analysis.report.html import render

    return render(ctx)


def agent_names(doc: dict) -> list[str]:
    return []  # a chat's speakers are its `agents` entries


def memory_rows(store: Any, doc: dict, names: list[str]) -> list[tuple[int, int, dict]]:
    """A chat's messages, numbered from 1, each its speaker's."""
    index = {name: i for i, name in reversed(list(enumerate(names)))}
    return [
        (m["seq"] + 1, index[m["speaker"]], m)
        for m in store.messages.for_conversation(doc["_id"])
        if m.get("speaker") in index and isinstance(m.get("seq"), int)
    ]
