"""The network's tidy tables and their export as JSON Lines, CSV or Parquet (analysis/exports.py).

`network_runs`: one row per run (where it sits, what it played on, its counters, its theory
twin); `network_rounds`: one row per stored (run, round, agent) with every stored field (`said` and
`heard` in free-chat rounds);
`network_round_measures`: one row per run and complete round with `ROUND_MEASURES`. Rows hold
scalars only (friends `;`-joined, a row's raw replies as JSON text, as the chat tables keep
lists) so the same rows write to every format and load into pandas or R without unpacking.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simulator.analysis.exports import write_listed
from simulator.analysis.spend import spend_columns
from simulator.analysis.tables import as_json_text, iso
from simulator.worlds.network.analysis.measures import ROUND_MEASURES
from simulator.worlds.network.analysis.runs import OpinionRun, TwinBook
from simulator.worlds.network.analysis.summary import DISTANCE_FIELDS, analysed
from simulator.worlds.network.domain.prompt_choices import PromptChoices

NETWORK_TABLES = ("network_runs", "network_rounds", "network_round_measures")


def _where(run: OpinionRun) -> dict:
    return {
        "conversation_id": run.id,
        "cell_key": run.cell_key,
        "cell_label": run.cell_label,
        "repetition": run.repetition,
    }


def run_row(run: OpinionRun, analysis: dict) -> dict:
    """One row per run: experiment, sweep and cell, what it played on, counters, its twin
    (`analysis` is summary.analyse_run's)."""
    counters, twin = run.counters, analysis.get("twin") or {}
    graph = run.settings.get("graph") or {}
    return {
        **_where(run),
        "experiment_id": run.doc.get("experiment_id"),
        "sweep_id": run.doc.get("sweep_id"),
        "status": run.status,
        "error": run.doc.get("error"),
        "owner": run.doc.get("owner"),
        "model": run.model,
        "seed": run.seed,
        "graph_type": graph.get("type"),
        "graph": as_json_text(graph),
        "snapshots": len(run.spec.get("snapshots") or []),
        "agents": len(run.names),
        "agents_table": run.settings.get("agents"),
        "agents_group": run.settings.get("group"),
        "scenario": run.settings.get("scenario"),
        "rounds": run.planned_rounds,
        "rounds_stored": max(run.last_round, 0),
        "theory_params": as_json_text(run.settings.get("theory")) if run.is_theory else None,
        **({} if run.is_theory else prompt_columns(run.settings.get("prompts"))),
        "answer_fallbacks": int(counters.get("answer_fallbacks") or 0),
        "empty_chat_messages": counters.get("empty_chat_messages"),
        "calls": counters.get("calls"),
        "tokens_out": counters.get("tokens_out"),
        **spend_columns(run.doc),  # dollars (or unknown), calls of unknown price, seconds
        "twin_id": twin.get("id"),
        "twin_match": twin.get("match"),
        **{f"twin_{k}": analysis.get(f"twin_{k}") for k in DISTANCE_FIELDS},
        "created_at": iso(run.doc.get("created_at")),
        "started_at": iso(run.doc.get("started_at")),
        "finished_at": iso(run.doc.get("finished_at")),
    }


def round_rows(run: OpinionRun) -> list[dict]:
    """One flat row per stored (round, agent), in round then agent order; `exact_opinion` is
    the theory's unrounded opinion (None in an LLM run)."""
    where = _where(run)
    out = []
    for row in run.rows:
        friends = [str(f) for f in row.get("friends") or []]
        replies = list(row.get("replies") or [])
        out.append(
            {
                **where,
                # the run that stored the row: a fork's shared rounds are its parent's
                "stored_in": row.get("conversation_id", run.id),
                "model": run.model,
                "round": int(row["round"]),
                "agent": row.get("agent"),
                "agent_index": int(row["agent_index"]),
                "opinion": row.get("opinion"),
                "exact_opinion": row.get("exact_opinion"),
                "decision": row.get("decision"),
                "thought": row.get("thought"),
                "friends": ";".join(friends) or None,
                "n_friends": len(friends),
                "attempts": row.get("attempts"),
                "answer_fallback": bool(row.get("answer_fallback")),
                "replies": as_json_text(replies) if replies else None,
                "said": row.get("said"),  # free-chat rounds: the message to its friends
                "heard": as_json_text(row["heard"]) if row.get("heard") is not None else None,
                "created_at": iso(row.get("created_at")),
            }
        )
    return out


def measure_rows(run: OpinionRun, analysis: dict) -> list[dict]:
    """One row per complete round with every `ROUND_MEASURES` figure."""
    where = {**_where(run), "model": run.model, "seed": run.seed}
    return [
        {**where, "round": m["round"], **{name: m[name] for name in ROUND_MEASURES}}
        for m in analysis["rounds"]
    ]


def network_table_batches(
    store: Any, run_ids: list[str], experiment_id: str
) -> Iterator[dict[str, list[dict]]]:
    """The three tables a run at a time (a run's rows fit in memory; a sweep's may not)."""
    twins = TwinBook(store, experiment_id)
    for run, analysis in analysed(store, run_ids, twins):
        yield {
            "network_runs": [run_row(run, analysis)],
            "network_rounds": round_rows(run),
            "network_round_measures": measure_rows(run, analysis),
        }


def export_network(
    store: Any,
    run_ids: list[str],
    experiment_id: str,
    fmt: str,
    out_dir: Path,
    field: str = "--output",
) -> list[dict]:
    """Write the three tables to `out_dir` (atomically, as every export does); one entry per
    table: name, path, rows."""
    batches = network_table_batches(store, run_ids, experiment_id)
    return write_listed(batches, NETWORK_TABLES, fmt, out_dir, field)


def prompt_columns(stored: dict | None) -> dict:
    """The prompt profile and its resolved switches (a run stored without `prompts` has the
    `simulator` profile, the only layout there was)."""
    switches = PromptChoices.model_validate(stored or {})
    return {
        "prompt_profile": switches.profile,
        **{f"prompt_{k}": v for k, v in switches.resolved().model_dump().items()},
    }
