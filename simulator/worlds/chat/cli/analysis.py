"""`llm-sim measures` on a chat target: the built-in measures per cell, and the prison paper's
tables where the conversations have its factors and outcome labels (cli/analysis_parts.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator

from simulator.analysis.measures import MEASURES
from simulator.analysis.prison_paper.measures import PaperTables, paper_tables
from simulator.analysis.scope import Scope
from simulator.cli.analysis_parts import MeasuresRequest, chosen_measures, print_cells, scope_info
from simulator.cli.context import AppContext
from simulator.cli.paper_tables import pick, print_paper_tables
from simulator.worlds.chat.analysis import world as chat_analysis

DEFAULT_MEASURES = (
    "words",
    "trimmed_share",
    "empty_share",
    "refusal_share",
    "repetition_share",
    "failed",
    "latency_s",
    "tokens_out",
)


def print_measures(app: AppContext, scope: Scope, request: MeasuresRequest) -> None:
    """Per cell: mean [95% CI] of the chosen measures, then the paper's tables (--paper or
    --table: those alone); --json: cells, every conversation's row and the paper's tables."""
    found = paper_tables(app.store, scope, request.labels)
    shown = pick(found, request.table_keys)
    if request.paper_only or request.table_keys:
        if request.as_json:
            app.print_json(_paper_json(scope, found, shown))
        else:
            print_paper_tables(app.console, found, shown)
        return
    measured = chat_analysis.measures(app.store, scope)
    cells = measured.cells()
    if request.as_json:
        _print_json_streamed(
            {
                "scope": scope_info(scope),
                "measures": MEASURES,
                "cells": cells,
                "conversations": _Rows(measured.rows, len(measured)),
                **_paper_json(scope, found, shown, with_scope=False),
            }
        )
        return
    _print_cells(app, scope, cells, request.chosen)
    print_paper_tables(app.console, found, shown)


def _paper_json(scope: Scope, found: PaperTables, shown: list, with_scope: bool = True) -> dict:
    return {
        **({"scope": scope_info(scope)} if with_scope else {}),
        "paper": [t.as_dict() for t in shown],
        "paper_labels": found.labels,
        "paper_note": found.note,
    }


def _print_cells(app: AppContext, scope: Scope, cells: list[dict], chosen: tuple[str, ...]) -> None:
    if not cells:
        app.console.print(f"No conversations in {scope.kind} {scope.id} yet.")
        return
    available = [k.removesuffix("_mean") for k in cells[0] if k.endswith("_mean")]
    names = chosen_measures(chosen, DEFAULT_MEASURES, available)
    title = f"Measures of {scope.kind} {scope.id}: mean [95% CI] per cell"
    print_cells(app.console, title, cells, names)


class _Rows(list):
    """A list the JSON encoder walks without holding it: rows are made one at a time."""

    def __init__(self, make: Callable[[], Iterator[dict]], count: int):
        super().__init__()
        self._make, self._count = make, count

    def __iter__(self) -> Iterator[dict]:
        return self._make()

    def __len__(self) -> int:
        return self._count


def _print_json_streamed(data: dict) -> None:
    """What `AppContext.print_json` prints (same text), written chunk by chunk: the encoder
    with an indent is the pure-Python one, which iterates lists lazily."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, default=str)
    for chunk in encoder.iterencode(data):
        sys.stdout.write(chunk)
    sys.stdout.write("\n")
    sys.stdout.flush()
