"""Tidy tables of a scope: one row per conversation, message, summary, call and score value.

Rows hold scalars only (nested values become columns or JSON text) so that the same rows
write to JSON Lines, CSV and Parquet unchanged, and load into pandas or R without unpacking.
Column names are documented in docs/analysis.md ("Exports").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from simulator.analysis.scope import Scope
from simulator.analysis.spend import spend_columns
from simulator.domain.clock import as_datetime
from simulator.domain.fork import point_text
from simulator.domain.ids import content_hash
from simulator.domain.vocabulary import COUNTER_NAMES
from simulator.worlds.chat.domain.sweep import Cell

TABLES = ("conversations", "messages", "summaries", "calls", "scores")
COUNTERS = COUNTER_NAMES  # the recorder's counters, one column each
MESSAGE_FIELDS = (
    "day",
    "index",
    "seq",
    "speaker",
    "role",
    "model",
    "llm_label",
    "text",
    "raw_text",
    "trimmed",
    "cut_at",
    "cut_label",
    "empty",
    "speaker_fallback",
    "latency_s",
    "tokens_in",
    "tokens_out",
)
CALL_FIELDS = (
    "seq",
    "purpose",
    "day",
    "index",
    "agent",
    "model",
    "llm_label",
    "base_url",
    "state",
    "attempt",
    "prompt_hash",
    "response",
    "tokens_in",
    "tokens_out",
    "latency_s",
    "waited_s",
    "cost",  # US dollars; empty when the model's price is unknown (never 0)
    "error",
    "error_kind",
)


BATCH = 200  # conversations per read: one batch of rows in memory, a few queries per batch


def load_tables(store: Any, scope: Scope) -> dict[str, list[dict]]:
    """Every table of the scope in memory, rows in conversation order then sequence order;
    scores by conversation id, scorer, target and user. For small scopes (the report):
    export and measures stream `table_batches` instead."""
    tables: dict[str, list[dict]] = {name: [] for name in TABLES}
    for batch in table_batches(store, scope):
        for name, rows in batch.items():
            tables[name].extend(rows)
    tables["scores"].sort(key=_score_order)  # stable: a document's values keep their order
    return tables


def table_batches(
    store: Any, scope: Scope, size: int | None = None
) -> Iterator[dict[str, list[dict]]]:
    """The tables of `size` conversations at a time, in scope order: each conversation's
    messages, summaries and calls in sequence order; scores by conversation (in scope
    order), scorer, target and user. Every table is read once per batch (never per
    conversation), and only the batch's documents are held: the scope holds ids."""
    roles = [r["name"] for r in scope.experiment.get("roles", [])]
    ids, size = scope.conversation_ids, size or BATCH
    for start in range(0, len(ids), size):
        docs = store.conversations.get_many(ids[start : start + size])
        chunk = [d["_id"] for d in docs]
        messages = store.messages.for_conversations(chunk)
        summaries = store.conversations.summaries_for(chunk)
        calls = store.calls.for_conversations(chunk)
        batch: dict[str, list[dict]] = {name: [] for name in TABLES}
        cell_keys: dict[str, str] = {}
        for doc in docs:
            row = conversation_row(doc, roles)
            cid, key = doc["_id"], row["cell_key"]
            cell_keys[cid] = key
            batch["conversations"].append(row)
            batch["messages"].extend(message_row(m, key) for m in messages[cid])
            batch["summaries"].extend(_summary_row(s, key) for s in summaries[cid])
            batch["calls"].extend(_call_row(c, key) for c in calls[cid])
        scores = store.scores.for_conversations(list(cell_keys))
        position = {cid: i for i, cid in enumerate(cell_keys)}
        scores.sort(key=lambda s: (position.get(s["conversation_id"], -1), *_score_order(s)[1:]))
        for score in scores:
            batch["scores"].extend(_score_rows(score, cell_keys.get(score["conversation_id"])))
        yield batch


def _score_order(doc: dict) -> tuple:
    return (doc["conversation_id"], doc["scorer"], doc["target_id"], doc.get("scored_by") or "")


def cell_of(doc: dict) -> dict:
    """The sweep cell, or the same factors derived from the spec of a single conversation (an
    imported conversation's `cell` holds its source's factors: its run cell is its spec's)."""
    if doc.get("cell") and not doc.get("imported"):
        return doc["cell"]
    spec = doc.get("spec") or {}

    def model(choice: dict | None) -> str | None:
        return choice.get("model") if choice else None

    return {
        "role_llms": {r: model(c) for r, c in (spec.get("role_llms") or {}).items()},
        "manager_llm": model(spec.get("manager_llm")),
        "summarizer_llm": model(spec.get("summarizer_llm")),
        "days": spec.get("days", 1),
        "agents": dict(spec.get("agents") or {}),
        "speaker_method": spec.get("speaker_method", "round_robin"),
        "variant": dict(spec.get("variant") or {}),
    }


def fork_place(doc: dict) -> str | None:
    """Where a fork branched from its parent, "DAY:INDEX" ("step N", "round N" for a grid's or
    a network's); None for a conversation that is not a fork."""
    if not doc.get("fork_of") or not doc.get("fork_at"):
        return None
    return point_text(doc["fork_at"])


def _cell_identity(doc: dict, cell: dict) -> tuple[str, str]:
    """(cell_key, cell_label): the sweep's when stored; else derived from the factors, and for
    a fork outside a sweep from where it branched too (parent, fork point, edit), so a parent
    and its branches, measured over different messages, never share a cell."""
    if doc.get("cell_key"):
        return doc["cell_key"], doc.get("cell_label") or Cell(**cell).label()
    place, label = fork_place(doc), doc.get("cell_label") or Cell(**cell).label()
    if place is None:
        return content_hash(cell, 16), label
    edit = (doc.get("fork_edit") or {}).get("text")
    branch = {"fork_of": doc["fork_of"], "fork_at": place, "edit": edit}
    edited = " edited" if edit is not None else ""
    return content_hash({**cell, "branch": branch}, 16), f"{label} from {place}{edited}"


def conversation_row(doc: dict, roles: list[str]) -> dict:
    cell = cell_of(doc)
    spec = doc.get("spec") or {}
    counters = doc.get("counters") or {}
    started, finished = as_datetime(doc.get("started_at")), as_datetime(doc.get("finished_at"))
    cell_key, cell_label = _cell_identity(doc, cell)
    row: dict = {
        "conversation_id": doc["_id"],
        "experiment_id": doc.get("experiment_id"),
        "sweep_id": doc.get("sweep_id"),
        "cell_key": cell_key,
        "cell_label": cell_label,
        "repetition": doc.get("repetition"),
        # forks (domain/fork.py) and replays: where the run came from; empty otherwise
        "parent_id": doc.get("fork_of"),
        "fork_at": fork_place(doc),
        "fork_group": doc.get("fork_group"),
        "fork_repetition": doc.get("fork_repetition"),
        "edited": bool(doc.get("fork_edit")),
        "replay_of": doc.get("replay_of"),
        "status": doc.get("status"),
        "error": doc.get("error"),
        "owner": doc.get("owner"),
        "seed": spec.get("seed"),
        "total_messages": spec.get("total_messages"),
        "message_counting": spec.get("message_counting", "agent_turns"),
        # the chat switches (domain/conversation.py); stored only when not the defaults
        "reply_cleaning": spec.get("reply_cleaning", "speakers"),
        "speaker_format": spec.get("speaker_format", "prefix"),
        "days": cell["days"],
        "speaker_method": cell["speaker_method"],
        "manager_llm": cell.get("manager_llm"),
        "summarizer_llm": cell.get("summarizer_llm"),
        "n_agents": sum(cell["agents"].values()),
    }
    for role in dict.fromkeys([*roles, *cell["agents"]]):
        row[f"agents_{role}"] = cell["agents"].get(role, 0)
        row[f"llm_{role}"] = cell["role_llms"].get(role)
    for slot, name in sorted(cell["variant"].items()):
        row[f"variant_{slot}"] = name
    for name in COUNTERS:
        row[f"n_{name}"] = counters.get(name, 0)
    row.update(spend_columns(doc))  # dollars (or unknown), calls of unknown price, seconds
    row["created_at"] = iso(doc.get("created_at"))
    row["started_at"] = iso(started)
    row["finished_at"] = iso(finished)
    row["duration_s"] = (
        round((finished - started).total_seconds(), 3) if started and finished else None
    )
    return row


def message_row(doc: dict, cell_key: str | None = None) -> dict:
    row = {
        "message_id": doc.get("_id"),
        "conversation_id": doc.get("conversation_id"),
        "cell_key": cell_key,
    }
    row.update({name: doc.get(name) for name in MESSAGE_FIELDS})
    row["speaker_notes"] = "; ".join(str(n) for n in doc.get("speaker_notes") or []) or None
    row["edited"] = bool(doc.get("edited"))  # a fork's researcher-written message
    row["original_text"] = doc.get("original_text")  # the parent's text it replaced
    row["created_at"] = iso(doc.get("created_at"))
    return row


def _summary_row(doc: dict, cell_key: str) -> dict:
    return {
        "summary_id": doc.get("_id"),
        "conversation_id": doc.get("conversation_id"),
        "cell_key": cell_key,
        "day": doc.get("day"),
        "model": doc.get("model"),
        "text": doc.get("text"),
        "raw_text": doc.get("raw_text"),
        "created_at": iso(doc.get("created_at")),
    }


def _call_row(doc: dict, cell_key: str) -> dict:
    row = {"call_id": doc.get("_id"), "conversation_id": doc.get("conversation_id")}
    row["cell_key"] = cell_key
    row.update({name: doc.get(name) for name in CALL_FIELDS})
    row["params"] = as_json_text(doc.get("params"))
    row["ignored_params"] = ",".join(doc.get("ignored_params") or []) or None
    row["model_identity"] = as_json_text(doc.get("model_identity"))
    row["created_at"] = iso(doc.get("created_at"))
    return row


def _score_rows(doc: dict, cell_key: str | None) -> list[dict]:
    """Long format: one row per value, so every scorer fits the same columns."""
    base = {
        "score_id": doc.get("_id"),
        "scorer": doc.get("scorer"),
        "scored_by": doc.get("scored_by"),  # None: scored before scores named their user
        "target_kind": doc.get("target_kind"),
        "target_id": doc.get("target_id"),
        "conversation_id": doc.get("conversation_id"),
        "cell_key": cell_key,
    }
    rows = []
    for name, value in sorted((doc.get("values") or {}).items()):
        rows.append(
            {
                **base,
                "field": name,
                "value": value if isinstance(value, str) or value is None else as_json_text(value),
                "value_num": to_number(value),
                "created_at": iso(doc.get("created_at")),
            }
        )
    return rows


def to_number(value: object) -> float | None:
    """Numbers as they are; yes/no and true/false as 1/0; anything else None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("yes", "true", "y"):
            return 1.0
        if text in ("no", "false", "n"):
            return 0.0
        try:
            return float(text)
        except ValueError:
            return None
    return None


def iso(value: object) -> str | None:
    moment = as_datetime(value)
    return moment.isoformat(timespec="milliseconds") if isinstance(moment, datetime) else None


def as_json_text(value: object) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
