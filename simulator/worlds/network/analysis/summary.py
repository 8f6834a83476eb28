"""`network_measures(store, scope)`: every network measure per run, per round and per cell.

One pass over the scope's runs (a batch at a time): each run's `ROUND_MEASURES` per complete
round, its final round as the run's summary, and for an LLM run with a theory twin the
distance between the two trajectories (`DISTANCE`), so `llm-sim measures` reads an LLM run and
the theory the same way. Cells average the summaries with the chat measures' mean and 95%
interval; theory runs form cells of their own (their `llm` is "theory").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simulator.analysis.spend import SPEND_MEASURES, spend_measures
from simulator.analysis.world_cells import mean_series, summarise_cells
from simulator.worlds.network.analysis.measures import (
    ROUND_MEASURES,
    run_measures,
    trajectory_distance,
)
from simulator.worlds.network.analysis.runs import OpinionRun, TwinBook, load_runs
from simulator.worlds.network.analysis.twins import Twin, describe
from simulator.worlds.network.domain.sweep import graph_label

DISTANCE_FIELDS = {
    "mean_opinion_rmse": "RMSE over rounds between the two mean-opinion series (0..10)",
    "share_yes_rmse": "RMSE over rounds between the two share-Yes series (0..1)",
    "opinion_rmse": "RMSE over every (round, agent) between the two runs' opinions (0..10)",
    "decision_disagreement": "share of (round, agent) decisions that differ",
}
DISTANCE = (
    "distance to the theory twin: the LLM run's trajectory against the twin's, over the "
    "rounds both stored (round 0, the table, included): "
    + "; ".join(f"{name}: {text}" for name, text in DISTANCE_FIELDS.items())
    + ". 0 everywhere is the same trajectory."
)
SUMMARY: dict[str, str] = {
    **{name: f"{text}, at the last complete round" for name, text in ROUND_MEASURES.items()},
    "answer_fallbacks": "answers kept from the round before because no reply parsed",
    "rounds_stored": "complete rounds after round 0",
    **SPEND_MEASURES,
    **{f"twin_{name}": f"theory twin: {text}" for name, text in DISTANCE_FIELDS.items()},
}
SERIES = ("mean_opinion", "share_yes")


def analyse_run(run: OpinionRun, twin: Twin | None, twin_run: OpinionRun | None) -> dict:
    """One run's figures: per round, its summary and (an LLM run) the distance to its twin."""
    rounds = run_measures(run.opinions, run.decisions, run.graphs) if run.by_round else []
    distance = None
    if twin_run is not None and run.by_round and twin_run.by_round:
        distance = trajectory_distance(
            run.opinions, run.decisions, twin_run.opinions, twin_run.decisions
        )
    final = rounds[-1] if rounds else {}
    row: dict[str, Any] = {
        "conversation_id": run.id,
        "model": run.model,
        "theory": run.is_theory,
        "seed": run.seed,
        "status": run.status,
        "cell_key": run.cell_key,
        "cell_label": run.cell_label,
        "cell": run.cell,
        "repetition": run.repetition,
        "agents": len(run.names),
        "planned_rounds": run.planned_rounds,
        **{name: final.get(name) for name in ROUND_MEASURES},
        "answer_fallbacks": int(run.counters.get("answer_fallbacks") or 0),
        "rounds_stored": max(run.last_round, 0),
        **spend_measures(run.doc),
        **{f"twin_{k}": (distance or {}).get(k) for k in DISTANCE_FIELDS},
    }
    row["twin"] = None if run.is_theory else (twin._asdict() if twin else None)
    row["twin_note"] = None if run.is_theory else describe(twin, run.doc)
    row["distance_rounds"] = distance["rounds"] if distance else None
    row["rounds"] = rounds
    return row


def analysed(store: Any, run_ids: list[str], twins: TwinBook) -> Iterator[tuple[OpinionRun, dict]]:
    """Each run with its analysis, in the order given; twins are read through `twins`."""
    for run in load_runs(store, run_ids):
        twin = twins.twin_of(run)
        yield run, analyse_run(run, twin, twins.run(twin))


def _number(value: Any) -> float | None:
    """Booleans as 0/1, so a cell's mean of `paradigm_shift` is the share of its runs."""
    return None if value is None else float(value)


def _shown(factor: str, value: Any) -> str:
    """A cell's graph as `barabasi_albert(n=50,m=5,seed=1)`, not the whole mapping."""
    return graph_label(value) if factor == "graph" and isinstance(value, dict) else str(value)


def cell_summaries(rows: list[dict]) -> list[dict]:
    """One entry per cell (first-seen order): n runs, `<measure>_mean/_ci_low/_ci_high`, and
    the mean opinion and share Yes averaged round by round."""
    return summarise_cells(
        rows,
        SUMMARY,
        head=lambda members: {"theory": bool(members[0]["theory"])},
        tail=lambda members: {
            "series": {
                name: mean_series([[m[name] for m in r["rounds"]] for r in members])
                for name in SERIES
            }
        },
        shown=_shown,
        number=_number,
    )


def network_measures(store: Any, run_ids: list[str], experiment_id: str) -> dict:
    """Per run (`runs`: identity, twin, per-round measures, final summary, distance) and per
    cell (`cells`), with what each figure means."""
    twins = TwinBook(store, experiment_id)
    rows = [row for _, row in analysed(store, run_ids, twins)]
    return {
        "round_measures": ROUND_MEASURES,
        "measures": SUMMARY,
        "distance": DISTANCE,
        "runs": rows,
        "cells": cell_summaries(rows),
    }
