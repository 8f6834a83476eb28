"""The market's analysis part (simulator/analysis/world_parts.py): one table of its runs, their
measures per run and per cell, and a small report."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from market_world.domain.kind import Spec, crossed
from market_world.engine.run import last_offers
from simulator.analysis.exports import write_listed
from simulator.analysis.scope import Scope
from simulator.analysis.world_cells import summarise_cells
from simulator.domain.ids import content_hash
from simulator.store import lineage

WORD = "market"
PAPER_LABELS = False
DRAWS_ROUNDS = False
MEMORY_CARRIED = "the other's last offer and its own"
STREAM_DAY_START = None
MEASURES = ("rounds", "final_gap", "deal", "fallbacks")


def run_row(store: Any, doc: dict) -> dict:
    """One run: where it sits and its measures (over its rows, a fork's shared ones included)."""
    spec = Spec.model_validate(doc["spec"])
    rows = lineage.full_rows(store, doc)
    done, (buyer, seller) = last_offers(spec, rows)
    cell = doc.get("cell") or {"llm": spec.llm.key, "rounds": spec.settings.rounds}
    return {
        "conversation_id": doc["_id"],
        "cell_key": doc.get("cell_key") or content_hash(cell, 16),
        "cell_label": doc.get("cell_label") or " ".join(f"{k}={v}" for k, v in cell.items()),
        "cell": cell,
        "status": doc.get("status"),
        "seed": spec.seed,
        "rounds": done,
        "final_gap": seller - buyer,
        "deal": int(crossed(buyer, seller)),
        "fallbacks": sum(bool(r["fallback"]) for r in rows),
    }


def run_rows(store: Any, scope: Scope) -> list[dict]:
    return [run_row(store, store.conversations.get(i)) for i in scope.conversation_ids]


def export_tables(
    store: Any, scope: Scope, fmt: str, output: Path, labels: str | None
) -> list[dict]:
    """`market_runs`: one row per run with its measures."""
    rows = [{k: v for k, v in r.items() if k != "cell"} for r in run_rows(store, scope)]
    return write_listed([{"market_runs": rows}], ["market_runs"], fmt, output)


def measures(store: Any, scope: Scope) -> dict:
    rows = run_rows(store, scope)
    cells = summarise_cells(rows, MEASURES, head=lambda m: {}, tail=lambda m: {})
    return {"measures": list(MEASURES), "runs": rows, "cells": cells}


@dataclass
class MarketReport:
    scope: Scope
    runs: list[dict]
    cells: list[dict] = field(default_factory=list)

    def shown(self) -> str:
        return f"{len(self.runs)} market runs"


def report_context(
    store: Any, scope: Scope, per_cell: int, round_index: int | None, labels: str | None
) -> MarketReport:
    found = measures(store, scope)
    return MarketReport(scope, found["runs"], found["cells"])


def render_report(ctx: MarketReport) -> str:
    head = "".join(f"<th>{name}</th>" for name in ("run", *MEASURES))
    body = "".join(
        "<tr>"
        + "".join(f"<td>{escape(str(r[k]))}</td>" for k in ("conversation_id", *MEASURES))
        + "</tr>"
        for r in ctx.runs
    )
    title = f"Market report on {ctx.scope.kind} {escape(ctx.scope.id)}"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}'
        f"</title></head><body><h1>{title}</h1><h2>Market runs</h2><table><tr>{head}</tr>"
        f"{body}</table></body></html>\n"
    )


def agent_names(doc: dict) -> list[str]:
    return Spec.model_validate(doc["spec"]).names


def memory_rows(store: Any, doc: dict, names: list[str]) -> list[tuple[int, int, dict]]:
    return []  # a market keeps no memory stream
