"""Spend as the analysis shows it: columns of a run's row in exports, the cost measures, and the
report's estimate against what was spent, per cell.

Money is None wherever a call's price is unknown (never 0), with those calls counted apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simulator.domain.budget import add_spend, empty_spend, spend_of

SPEND_MEASURES: dict[str, str] = {
    "cost": "US dollars over the run's calls (empty when a call's price is unknown)",
    "call_seconds": "seconds the run's calls took, summed",
}


def known_cost(spend: dict) -> float | None:
    """The dollars of `spend`, None when some call's price is unknown."""
    return None if spend.get("cost_unknown_calls") else round(float(spend.get("cost") or 0), 10)


def spend_columns(doc: dict) -> dict:
    """A run's spend as export columns (from its `spend` field; empty before money was kept)."""
    stored = doc.get("spend")
    if stored is None:
        return {"cost": None, "cost_unknown_calls": None, "call_seconds": None}
    spend = spend_of(stored)
    return {
        "cost": known_cost(spend),
        "cost_unknown_calls": spend["cost_unknown_calls"],
        "call_seconds": round(spend["seconds"], 3),
    }


def spend_measures(doc: dict) -> dict:
    """The SPEND_MEASURES of a run, from its `spend` field."""
    columns = spend_columns(doc)
    return {"cost": columns["cost"], "call_seconds": columns["call_seconds"]}


def calls_measures(calls: Iterable[dict]) -> tuple[float | None, float]:
    """(cost, call_seconds) of a run's ledger rows (export rows): cost None when a row's price
    is unknown."""
    cost: float | None = 0.0
    seconds = 0.0
    for call in calls:
        seconds += float(call.get("latency_s") or 0)
        if call.get("cost") is None and call.get("state") != "in_flight":
            cost = None
        elif cost is not None:
            cost += float(call.get("cost") or 0)
    return (None if cost is None else round(cost, 10)), round(seconds, 3)


def sweep_spend_report(store: Any, sweep: dict) -> dict:
    """The sweep's spend: its total (the sweep's counters) and per cell what was spent, beside
    the estimate stored with the sweep when there is one."""
    cells: dict[str, dict] = {}
    query = {"sweep_id": {"$eq": sweep["_id"]}}
    fields = {"cell_key": 1, "cell_label": 1, "spend": 1}
    for doc in store.db.conversations.find(query, fields):
        row = cells.setdefault(
            str(doc.get("cell_key")),
            {"label": doc.get("cell_label"), "conversations": 0, **empty_spend()},
        )
        row["conversations"] += 1
        add_spend(row, spend_of(doc.get("spend")))
    estimate = sweep.get("estimate") or {}
    planned = estimate.get("cells") or {}
    rows = []
    for key in dict.fromkeys([*planned, *cells]):
        actual = cells.get(key) or {"label": None, **empty_spend()}
        guess = planned.get(key) or {}
        rows.append(
            {
                "cell": guess.get("label") or actual.get("label") or key,
                "estimate_calls": guess.get("calls"),
                "calls": actual["calls"],
                "estimate_tokens": _tokens(guess) if guess else None,
                "tokens": actual["tokens_in"] + actual["tokens_out"],
                "estimate_cost": guess.get("cost"),
                "cost": known_cost(actual),
                "cost_unknown_calls": actual["cost_unknown_calls"],
                "call_seconds": round(actual["seconds"], 1),
            }
        )
    return {
        "total": spend_of(sweep.get("spend")),
        "estimated": bool(planned),
        "method": estimate.get("method"),
        "cells": rows,
    }


def _tokens(guess: dict) -> int | None:
    if guess.get("tokens_in") is None or guess.get("tokens_out") is None:
        return None
    return int(guess["tokens_in"]) + int(guess["tokens_out"])


def runs_spend_report(conversations: Iterable[dict]) -> dict | None:
    """The spend of runs outside a sweep, from their documents (None when none carries it)."""
    total, seen = empty_spend(), False
    for doc in conversations:
        if doc.get("spend") is not None:
            seen = True
            add_spend(total, spend_of(doc["spend"]))
    if not seen:
        return None
    return {"total": total, "estimated": False, "method": None, "cells": []}


def scope_spend(store: Any, scope: Any) -> dict:
    """What the runs of a scope spent: a sweep's counters, else its runs' `spend` summed (read
    500 documents at a time, that field alone)."""
    if scope.kind == "sweep" and scope.sweep is not None:
        return spend_of(scope.sweep.get("spend"))
    total = empty_spend()
    ids = scope.conversation_ids
    for start in range(0, len(ids), 500):
        query = {"_id": {"$in": ids[start : start + 500]}}
        for doc in store.db.conversations.find(query, {"spend": 1}):
            add_spend(total, spend_of(doc.get("spend")))
    return total
