"""The grid's tidy tables, `grid_runs` (one row per run) and `grid_steps` (one row per step x
agent), and their export as JSON Lines, CSV or Parquet through analysis/exports.py.

Rows hold scalars only (lists become `;`-joined names, positions x and y columns), so the same
rows write to every format and load into pandas or R without unpacking, as the chat tables do.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simulator.analysis.exports import write_listed
from simulator.analysis.spend import spend_columns
from simulator.analysis.tables import iso
from simulator.errors import UserError
from simulator.worlds.grid.analysis.clusters import cluster_measures
from simulator.worlds.grid.analysis.emotions import EMOTIONS, message_emotions, nrc_lexicon
from simulator.worlds.grid.analysis.hallucinations import named_in
from simulator.worlds.grid.analysis.hashtags import hashtags_in
from simulator.worlds.grid.analysis.measures import party_summary
from simulator.worlds.grid.analysis.moves import FALLBACK, bucket_of
from simulator.worlds.grid.analysis.party import party_measures
from simulator.worlds.grid.analysis.personality import (
    personality_measures,
    personality_rows,
    personality_summary,
)
from simulator.worlds.grid.analysis.runs import GridRun, load_runs
from simulator.worlds.grid.domain.measures import words_of_spec

GRID_TABLES = ("grid_runs", "grid_steps", "grid_personality")
STEP_COLUMNS = (
    "conversation_id",
    "cell_key",
    "cell_label",
    "repetition",
    "stored_in",
    "step",
    "agent",
    "agent_index",
    "x_before",
    "y_before",
    "x_after",
    "y_after",
    "move",
    "move_fallback",
    "move_choice",
    "move_reply",
    "message",
    "hashtags",
    "hallucinations",
    "recipients",
    "n_recipients",
    "heard_from",
    "n_heard",
    "received",
    "memory",
    "cluster_after",
    "created_at",
    # the message's NRC emotion scores (None without an emotion word or without the extra)
    "emotion_dominant",
    *(f"emotion_{e}" for e in EMOTIONS),
)


def run_row(run: GridRun, party: dict | None = None) -> dict:
    """One row per run: where it sits (experiment, sweep, cell) and its world's parameters;
    with `party` (`party_summary` of its probe's measures), the party's figures too."""
    counters = run.doc.get("counters") or {}
    return {
        "conversation_id": run.id,
        "experiment_id": run.doc.get("experiment_id"),
        "sweep_id": run.doc.get("sweep_id"),
        "cell_key": run.cell_key,
        "cell_label": run.cell_label,
        "repetition": run.repetition,
        "status": run.status,
        "error": run.doc.get("error"),
        "owner": run.doc.get("owner"),
        "seed": run.spec.get("seed"),
        "model": run.model,
        "width": run.width,
        "height": run.height,
        "torus": run.torus,
        "agents": len(run.names),
        "steps": run.planned_steps,
        "steps_stored": run.last_step,
        "radius": run.radius,
        "calls": counters.get("calls"),
        "tokens_out": counters.get("tokens_out"),
        **spend_columns(run.doc),  # dollars (or unknown), calls of unknown price, seconds
        "created_at": iso(run.doc.get("created_at")),
        "started_at": iso(run.doc.get("started_at")),
        "finished_at": iso(run.doc.get("finished_at")),
        **move_and_hallucination_counts(run),
        **(party or {}),
    }


def move_and_hallucination_counts(run: GridRun) -> dict:
    """The run's stays the model chose, its fallbacks (apart), its messages naming a listed
    word and the list they were read with (analysis/grid/hallucinations.py)."""
    buckets = [bucket_of(row) for row in run.rows]
    words = words_of_spec(run.spec)
    return {
        "stays": buckets.count("stay"),
        "fallbacks": buckets.count(FALLBACK),
        "hallucinated_messages": sum(bool(named_in(r.get("message"), words)) for r in run.rows),
        "hallucination_words": ";".join(words),
    }


def step_rows(run: GridRun, clusters: dict | None = None) -> list[dict]:
    """One flat row per stored (step, agent), in step then agent order; `cluster_after` is the
    agent's DBSCAN cluster after the step's moves (-1: alone; see clusters.py)."""
    labels = (clusters or _clusters_if_possible(run) or {}).get("labels") or []
    words = words_of_spec(run.spec)
    rows = []
    for row in run.rows:
        step, index = int(row["step"]), int(row["agent_index"])
        before, after = row.get("position_before") or [None, None], row.get("position_after")
        after = after or [None, None]
        recipients, heard = list(row.get("recipients") or []), list(row.get("heard_from") or [])
        rows.append(
            {
                "conversation_id": run.id,
                "cell_key": run.cell_key,
                "cell_label": run.cell_label,
                "repetition": run.repetition,
                # the run that stored the row: a fork's shared steps are its parent's (keep
                # rows where stored_in == conversation_id to count each stored row once)
                "stored_in": row.get("conversation_id", run.id),
                "step": step,
                "agent": row.get("agent"),
                "agent_index": index,
                "x_before": before[0],
                "y_before": before[1],
                "x_after": after[0],
                "y_after": after[1],
                "move": row.get("move"),
                "move_fallback": bool(row.get("move_fallback")),
                "move_choice": bucket_of(row),  # "fallback": the reply named no command
                "move_reply": row.get("move_reply"),
                "message": row.get("message"),
                "hashtags": " ".join(hashtags_in(row.get("message"))) or None,
                "hallucinations": ";".join(named_in(row.get("message"), words)) or None,
                "recipients": ";".join(recipients) or None,
                "n_recipients": len(recipients),
                "heard_from": ";".join(heard) or None,
                "n_heard": len(heard),
                "received": row.get("received"),
                "memory": row.get("memory"),
                "cluster_after": labels[step][index] if step < len(labels) else None,
                "created_at": iso(row.get("created_at")),
                **_emotion_columns(row.get("message")),
            }
        )
    return rows


def _emotion_columns(message: str | None) -> dict:
    """A message's emotion columns; all None without the `emotion` extra."""
    try:
        found = message_emotions(str(message or ""), nrc_lexicon())
    except UserError:
        return {"emotion_dominant": None, **{f"emotion_{e}": None for e in EMOTIONS}}
    scores = found["scores"] or {}
    return {
        "emotion_dominant": found["dominant"],
        **{f"emotion_{e}": scores.get(e) for e in EMOTIONS},
    }


def _clusters_if_possible(run: GridRun) -> dict | None:
    """The clusters, or None without scikit-learn: the export itself needs no extra."""
    try:
        return cluster_measures(run)
    except UserError:
        return None


def grid_table_batches(store: Any, run_ids: list[str]) -> Iterator[dict[str, list[dict]]]:
    """The two tables a run at a time (a run's rows fit in memory; a sweep's may not)."""
    for run in load_runs(store, run_ids):
        party = party_summary(party_measures(store, run))  # all None without a probe
        tests = personality_measures(run)  # None without a personality test
        yield {
            "grid_runs": [run_row(run, party) | personality_summary(tests)],
            "grid_steps": step_rows(run),
            "grid_personality": personality_rows(run, tests),
        }


def export_grid(
    store: Any, run_ids: list[str], fmt: str, out_dir: Path, field: str = "--output"
) -> list[dict]:
    """Write `grid_runs` and `grid_steps` to `out_dir` (atomically, as the chat export does);
    one entry per table: name, path, rows."""
    return write_listed(grid_table_batches(store, run_ids), GRID_TABLES, fmt, out_dir, field)
