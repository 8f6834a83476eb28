"""Collect everything the report shows into one plain context; rendering happens in html.py.

Keeping the data gathering apart from the template lets tests check the numbers without a
browser, and keeps every store query in the analysis modules that already own them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from simulator.analysis.report import plots as plots_mod
from simulator.analysis.spend import runs_spend_report, sweep_spend_report
from simulator.domain.plural import nouns
from simulator.domain.vocabulary import CONVERSATION_STATUSES
from simulator.store.store import Store


@dataclass
class ReportHead:
    """What every world's report context starts with: what the page is about, the plan and
    its status, and the per-cell measures table (`measures`: (name, description) in column
    order; `cells`: one row per cell)."""

    title: str
    generated_at: str
    kind: str
    target_id: str
    experiment_id: str
    experiment: dict
    sweep: dict | None
    status: dict
    measures: list[tuple[str, str]]
    cells: list[dict]

    def shown(self) -> str:
        """What the CLI's closing line says the page lets one read ("4 transcripts")."""
        shown = len(self.transcripts["conversations"])  # type: ignore[attr-defined]
        return f"{shown} {nouns(shown, 'transcript')}"


def head_fields(store: Store, scope: Any, conversations: list[dict]) -> dict:
    """A ReportHead's fields but the measures: title, time, target, experiment and the
    status of the runs `conversations` (their documents or rows, each with a `status`)."""
    experiment = dict(scope.experiment or {})
    return {
        "title": f"{experiment.get('name', scope.experiment_id)} — {scope.kind} {scope.id}",
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "kind": scope.kind,
        "target_id": scope.id,
        "experiment_id": scope.experiment_id,
        "experiment": experiment,
        "sweep": scope.sweep,
        "status": sweep_status(store, scope, conversations),
    }


def pick_replays(candidates: dict[str, list[Any]], cap: int) -> list[Any]:
    """Round robin over the cells (first-seen order): every cell's first run, then every
    cell's second, … until `cap` runs."""
    chosen: list[Any] = []
    depth = max((len(runs) for runs in candidates.values()), default=0)
    for at in range(depth):
        for runs in candidates.values():
            if at < len(runs) and len(chosen) < cap:
                chosen.append(runs[at])
    return chosen


@dataclass
class ReportContext(ReportHead):
    """What html.render needs; model text stays raw here and is escaped only when rendered."""

    plots: list[plots_mod.Plot]
    transcripts: dict
    left_out: int = 0
    roles: list[str] = field(default_factory=list)
    bodies: list[dict] = field(default_factory=list)  # one per transcripts["conversations"]
    branches: dict | None = None  # the scope's forks (branches_context.py); None: no fork
    paper: Any = None  # the prison paper's tables (prison_paper/measures.PaperTables); or None


def build_context(
    store: Store,
    target_id: str,
    per_cell: int = 20,
    scope: Any = None,
    paper_labels: str | None = None,
) -> ReportContext:
    """Resolve the target (unless its `scope` is given), load its tables, compute measures and
    plots, pick transcripts; the prison paper's tables from the outcome source
    `paper_labels` (None: the default source)."""
    from simulator.analysis import measures as measures_mod
    from simulator.analysis.cell_labels import cell_labels
    from simulator.analysis.prison_paper.measures import paper_tables
    from simulator.analysis.report.branches_context import build_branches
    from simulator.analysis.scope import resolve_scope
    from simulator.analysis.tables import load_tables

    plots_mod.require_matplotlib()  # fail before any work when the extra is missing
    scope = scope or resolve_scope(store, target_id)
    tables = load_tables(store, scope)
    conv_rows = measures_mod.conversation_measures(tables)
    labels = cell_labels(tables.get("conversations", []))
    cells = measures_mod.cell_measures(conv_rows, labels)
    experiment = dict(scope.experiment or {})
    roles = [r["name"] for r in experiment.get("roles", [])]
    conversations = tables.get("conversations", [])
    messages = tables.get("messages", [])
    variants = {conversation_id(c): variant_label(c) for c in conversations}
    transcripts, bodies, left_out = transcript_data(tables, roles, per_cell, labels)
    return ReportContext(
        **head_fields(store, scope, conversations),
        measures=measure_columns(cells, measures_mod.MEASURES),
        cells=cells,
        plots=[
            plots_mod.length_by_role(messages, roles),
            plots_mod.rates_by_model(messages, tables.get("calls", [])),
            plots_mod.scores_by_variant(conv_rows, variants),
        ],
        transcripts=transcripts,
        left_out=left_out,
        roles=roles,
        bodies=bodies,
        branches=build_branches(store, tables, conv_rows),
        paper=paper_tables(store, scope, paper_labels),
    )


def conversation_id(row: dict) -> str:
    """Tables name the id `conversation_id`; tolerate `id`/`_id` so a rename cannot break us."""
    return str(row.get("conversation_id") or row.get("id") or row.get("_id"))


def variant_label(row: dict) -> str:
    """'Goal=escape, Personality=abusive' from the `variant_<slot>` columns, else the cell."""
    parts = [
        f"{k.removeprefix('variant_').split('/')[-1]}={v}"
        for k, v in sorted(row.items())
        if k.startswith("variant_") and v is not None
    ]
    return ", ".join(parts) or str(row.get("cell_label") or "(default)")


def sweep_status(store: Store, scope: Any, conversations: list[dict]) -> dict:
    """The sweep's own status when there is a sweep; otherwise counted from the rows."""
    if scope.kind == "sweep":
        summary = store.sweeps.status_summary(scope.id)
        summary["spend"] = sweep_spend_report(store, scope.sweep)  # beside its estimate
        return summary
    counts = Counter(str(c.get("status")) for c in conversations)
    return {
        "total": len(conversations),
        "counts": {s: counts.get(s, 0) for s in CONVERSATION_STATUSES},
        "complete": counts.get("done", 0) == len(conversations),
        "spend": runs_spend_report(conversations),
    }


def measure_columns(cells: list[dict], known: dict[str, str]) -> list[tuple[str, str]]:
    """Measures present in any cell, in MEASURES order; `words_<Role>`-style templates expand
    in place to the per-role and per-scorer columns found."""
    present = list(
        dict.fromkeys(k.removesuffix("_mean") for c in cells for k in c if k.endswith("_mean"))
    )
    columns: list[tuple[str, str]] = []
    for name, desc in known.items():
        if "<" in name:
            prefix = name.split("<", 1)[0]
            columns += [
                (p, desc) for p in sorted(present) if p.startswith(prefix) and p not in known
            ]
        elif name in present:
            columns.append((name, desc))
    listed = {name for name, _ in columns}
    return columns + [(p, p.replace("_", " ")) for p in present if p not in listed]


def transcript_data(
    tables: dict, roles: list[str], per_cell: int, labels: dict[str, str] | None = None
) -> tuple[dict, list[dict], int]:
    """The transcript browser's data: a small index and one compact body per conversation.

    The page parses the index at once and a body only when its conversation is opened, so a
    report with a thousand transcripts (or a megabyte reply) opens as fast as a small one.
    A message is `[day, speaker, role, model, flags, text]`; speaker, role and model are
    positions in the index's lists (names repeat in every message), flags: 1 trimmed, 2 empty,
    4 a fork's researcher-written message. A fork's entry says where it branched (`fork`).
    """
    by_conv: dict[str, list[dict]] = defaultdict(list)
    for row in sorted(tables.get("messages", []), key=lambda m: m.get("seq") or 0):
        by_conv[str(row.get("conversation_id"))].append(row)
    summaries: dict[str, dict[int, str]] = defaultdict(dict)
    for row in tables.get("summaries", []):
        summaries[str(row.get("conversation_id"))][int(row.get("day") or 0)] = str(
            row.get("text") or ""
        )
    names: dict[str, dict[str, int]] = {"speakers": {}, "models": {}}

    def position(kind: str, value: object) -> int:
        return names[kind].setdefault(str(value or ""), len(names[kind]))

    cells: dict[str, dict] = {}
    conversations: list[dict] = []
    bodies: list[dict] = []
    left_out = 0
    for conv in tables.get("conversations", []):
        cid = conversation_id(conv)
        key = str(conv.get("cell_key") or "-")
        label = (labels or {}).get(key) or conv.get("cell_label") or key
        cell = cells.setdefault(key, {"key": key, "label": label, "n": 0})
        cell["n"] += 1
        if cell["n"] > per_cell:
            left_out += 1
            continue
        rows = by_conv.get(cid, [])
        for row in rows:
            if row.get("role") and row["role"] not in roles:
                roles.append(str(row["role"]))
        entry = {
            "id": cid,
            "cell": key,
            "status": conv.get("status"),
            "repetition": conv.get("repetition") or conv.get("fork_repetition"),
            "n": len(rows),
        }
        if conv.get("parent_id"):  # a fork: its own messages only, from the fork point
            edited = ", edited there" if conv.get("edited") else ""
            entry["fork"] = f"fork of {conv['parent_id']} at {conv.get('fork_at')}{edited}"
        conversations.append(entry)
        bodies.append(
            {
                "m": [
                    [
                        row.get("day"),
                        position("speakers", row.get("speaker")),
                        roles.index(row["role"]) if row.get("role") in roles else -1,
                        position("models", row.get("model")),
                        int(bool(row.get("trimmed")))
                        | 2 * int(bool(row.get("empty")))
                        | 4 * int(bool(row.get("edited"))),
                        str(row.get("text") or ""),
                    ]
                    for row in rows
                ],
                "s": {str(day): text for day, text in sorted(summaries[cid].items())},
            }
        )
    data = {
        "roles": roles,
        "speakers": list(names["speakers"]),
        "models": list(names["models"]),
        "cells": list(cells.values()),
        "conversations": conversations,
    }
    return data, bodies, left_out
