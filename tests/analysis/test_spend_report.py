"""The report's spend block: per cell what the runs spent, beside the sweep's estimate when it
has one; a cell whose calls include an unknown price shows its money as unknown."""

from __future__ import annotations

from simulator.analysis.report.spend_html import spend_html
from simulator.analysis.spend import calls_measures, sweep_spend_report


def _run(store, cell: str, spend: dict) -> None:
    store.db.conversations.insert_one(
        {
            "_id": f"conv_{cell}_{spend['calls']}",
            "sweep_id": "sweep_s",
            "cell_key": cell,
            "cell_label": f"label {cell}",
            "status": "done",
            "spend": spend,
        }
    )


def test_each_cell_shows_its_estimate_beside_what_its_runs_spent(store):
    estimate = {
        "method": "approximation: 4 characters per token",
        "cells": {
            "a": {
                "label": "cell A",
                "conversations": 2,
                "calls": 8,
                "tokens_in": 800,
                "tokens_out": 200,
                "cost": 0.5,
                "seconds": None,
            },
            "b": {
                "label": "cell B",
                "conversations": 1,
                "calls": 4,
                "tokens_in": 400,
                "tokens_out": 100,
                "cost": None,
                "seconds": None,
            },
        },
    }
    sweep = {"_id": "sweep_s", "estimate": estimate, "spend": {"calls": 13, "cost": 0.75}}
    _run(
        store,
        "a",
        {
            "calls": 4,
            "tokens_in": 500,
            "tokens_out": 100,
            "cost": 0.25,
            "cost_unknown_calls": 0,
            "seconds": 2.0,
        },
    )
    _run(
        store,
        "a",
        {
            "calls": 5,
            "tokens_in": 400,
            "tokens_out": 90,
            "cost": 0.5,
            "cost_unknown_calls": 0,
            "seconds": 3.0,
        },
    )
    _run(
        store,
        "b",
        {
            "calls": 4,
            "tokens_in": 400,
            "tokens_out": 80,
            "cost": 0.0,
            "cost_unknown_calls": 4,
            "seconds": 1.5,
        },
    )
    report = sweep_spend_report(store, sweep)
    a, b = report["cells"]
    assert (a["cell"], a["estimate_calls"], a["calls"]) == ("cell A", 8, 9)
    assert (a["estimate_tokens"], a["tokens"]) == (1000, 1090)
    assert (a["estimate_cost"], a["cost"], a["call_seconds"]) == (0.5, 0.75, 5.0)
    assert b["cost"] is None and b["cost_unknown_calls"] == 4  # unknown, never $0
    html = spend_html(report)
    assert "cost (estimate)" in html and "cell A" in html and "$0.75" in html
    assert "unknown (4 calls)" in html and "4 characters per token" in html


def test_without_an_estimate_the_report_shows_what_was_spent_alone(store):
    _run(
        store,
        "a",
        {
            "calls": 2,
            "tokens_in": 10,
            "tokens_out": 5,
            "cost": 0.01,
            "cost_unknown_calls": 0,
            "seconds": 1.0,
        },
    )
    report = sweep_spend_report(store, {"_id": "sweep_s", "spend": {"calls": 2}})
    assert not report["estimated"] and report["cells"][0]["estimate_calls"] is None
    html = spend_html(report)
    assert "estimate" not in html and "label a" in html and "2 calls" in html


def test_a_runs_cost_is_unknown_when_one_of_its_calls_has_no_price():
    assert calls_measures([{"cost": 0.5, "latency_s": 1}, {"cost": 0.25, "latency_s": 2}]) == (
        0.75,
        3.0,
    )
    assert calls_measures([{"cost": 0.5}, {"cost": None, "state": "done"}])[0] is None
    assert calls_measures([{"cost": None, "state": "in_flight"}])[0] == 0.0  # no reply yet
