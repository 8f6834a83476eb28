"""The report's branch view (data): a scope's forks as a tree, and per fork point its branches
side by side with the parent from that point, and grouped by the agents' model.

A fork stores only its messages from its fork point on (domain/fork.py): its measures are its
own rows' (measures.py), and the parent is measured here from the same point, so a column
compares like with like. The shared prefix and the parent's messages are read once per fork
point (store/lineage.py), also when the parent is outside the scope (a fork sweep's). Model text
stays raw here; branches_html.py escapes it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from simulator.analysis.measures import conversation_record, finish_record, from_point, roles_of
from simulator.analysis.tables import conversation_row
from simulator.domain.fork import MAX_FORK_DEPTH, ForkPoint
from simulator.store import lineage

MAX_POINTS = 10  # fork points drawn side by side and by model; the tree lists every branch
MAX_COLUMNS = 12  # branches side by side per fork point, besides the parent's column
MAX_ROWS = 80  # message places per side-by-side table
PREFIX_SHOWN = 30  # the shared prefix's last messages shown above the columns
REPLIES_SHOWN = 20  # first replies listed per model
BRANCH_MEASURES = (
    "messages",
    "words",
    "refusal_share",
    "repetition_share",
    "empty_share",
    "trimmed_share",
    "latency_s",
    "tokens_out",
)


def models_label(row: dict) -> str:
    """The agents' model: one name when every role uses it, else `Role→model` per role."""
    used = {k.removeprefix("llm_"): v for k, v in row.items() if k[:4] == "llm_" and v}
    if len(set(used.values())) == 1:
        return str(next(iter(used.values())))
    return " ".join(f"{role}→{model}" for role, model in used.items()) or "–"


def build_branches(store: Any, tables: dict, conv_rows: list[dict]) -> dict | None:
    """The branch view of a scope's tables, or None when the scope holds no fork."""
    rows = tables.get("conversations", [])
    forks = [r for r in rows if r.get("parent_id")]
    if not forks:
        return None
    by_id = {r["conversation_id"]: r for r in rows}
    roles = roles_of(rows)
    outside = [p for p in dict.fromkeys(f["parent_id"] for f in forks) if p not in by_id]
    docs = {
        d["_id"]: d
        for d in store.conversations.get_many(outside + [f["conversation_id"] for f in forks])
    }
    for parent in outside:  # a fork sweep's parent: read, drawn, but not measured as a cell
        if parent in docs:  # else gone (a damaged store): its forks stay out of the view
            by_id[parent] = {**conversation_row(docs[parent], roles), "outside": True}
    forks = [f for f in forks if f["parent_id"] in by_id]
    if not forks:
        return None
    outside = [p for p in outside if p in by_id]
    measured = {r["conversation_id"]: r for r in conv_rows}
    messages: dict[str, list[dict]] = defaultdict(list)
    for m in sorted(tables.get("messages", []), key=lambda m: m.get("seq") or 0):
        messages[str(m.get("conversation_id"))].append(m)
    names = [n for n in BRANCH_MEASURES if any(n in r for r in conv_rows)]
    names += sorted({k for r in conv_rows for k in r if k[:6] == "score_" and "_by_" not in k})
    forks.sort(key=_sibling_order(forks))
    kids: dict[str, list[dict]] = defaultdict(list)
    for fork in forks:
        kids[fork["parent_id"]].append(fork)
    branches = {
        f["conversation_id"]: _branch(f, docs.get(f["conversation_id"], {}), measured, messages)
        for f in forks
    }
    points: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for fork in forks:
        points[(fork["parent_id"], fork["fork_at"])].append(branches[fork["conversation_id"]])
    roots = [r for r in rows if not r.get("parent_id") and kids.get(r["conversation_id"])]
    roots += [by_id[p] for p in outside]
    plain = sum(1 for r in rows if not r.get("parent_id") and not kids.get(r["conversation_id"]))
    views = [
        _point_view(store, by_id[parent], at, shown, tables, names, roles)
        for (parent, at), shown in list(points.items())[:MAX_POINTS]
    ]
    return {
        "tree": [_node(r, kids, branches, by_id, 0) for r in roots],
        "points": views,
        "n_branches": len(forks),
        "n_points": len(points),
        "plain": plain,  # conversations of the scope with no fork: left out of the tree
        "measures": names,
    }


def _sibling_order(forks: list[dict]):
    """Fork commands (and fork sweeps) oldest first; within one, by model, then repetition
    (a command's or a sweep's branches are stored within the same millisecond)."""
    first: dict = {}
    for row in forks:
        group = row.get("fork_group") or row["conversation_id"]
        first[group] = min(first.get(group, "~"), row.get("created_at") or "")

    def key(row: dict) -> tuple:
        group = row.get("fork_group") or row["conversation_id"]
        return (first[group], group, models_label(row), row.get("fork_repetition") or 0)

    return key


def _branch(row: dict, doc: dict, measured: dict, messages: dict) -> dict:
    own = messages.get(row["conversation_id"], [])
    edit = doc.get("fork_edit") or {}
    return {
        "id": row["conversation_id"],
        "parent_id": row["parent_id"],
        "fork_at": row["fork_at"],
        "group": row.get("fork_group"),
        "repetition": row.get("fork_repetition"),
        "seed": row.get("seed"),
        "status": row.get("status"),
        "models": models_label(row),
        "edited": bool(row.get("edited")),
        "edit": edit.get("text"),
        "original": edit.get("original_text"),
        "n": len(own),
        "measures": measured.get(row["conversation_id"], {}),
        "messages": own,
        "first_reply": next((m for m in own if not m.get("edited")), None),
    }


def _node(row: dict, kids: dict, branches: dict, by_id: dict, depth: int) -> dict:
    cid = row["conversation_id"]
    node = {
        "id": cid,
        "models": models_label(row),
        "seed": row.get("seed"),
        "status": row.get("status"),
        "edited": bool(row.get("edited")),
        "n": branches[cid]["n"] if cid in branches else row.get("n_messages"),
        "outside": bool(row.get("outside")),
        "fork": bool(row.get("parent_id")),
        "points": [],
    }
    if depth >= MAX_FORK_DEPTH:
        return node
    by_point: dict[str, list[dict]] = defaultdict(list)
    for kid in kids.get(cid, []):
        by_point[kid["fork_at"]].append(kid)
    for at in sorted(by_point, key=ForkPoint.parse):
        below = [_node(k, kids, branches, by_id, depth + 1) for k in by_point[at]]
        edits = list(dict.fromkeys(branches[k["conversation_id"]]["edit"] for k in by_point[at]))
        node["points"].append({"at": at, "edits": [t for t in edits if t], "branches": below})
    return node


def _point_view(
    store: Any, parent: dict, at: str, branches: list[dict], tables: dict, names: list, roles
) -> dict:
    """One fork point: the shared prefix, the parent and each branch from the point (places
    aligned by DAY:INDEX), their measures, and the branches grouped by model."""
    point = ForkPoint.parse(at)
    parent_id = parent["conversation_id"]
    doc = store.conversations.get(parent_id)
    transcript, _ = lineage.full_transcript(store, doc)
    shared = [m for m in transcript if point.holds(m["day"], m["index"])]
    said = from_point(transcript, point)
    calls = from_point(store.calls.for_conversation(parent_id), point)
    ids = {m.get("_id") for m in said}
    scores = [
        s
        for s in tables.get("scores", [])
        if s.get("conversation_id") == parent_id
        and s.get("target_kind") == "message"
        and s.get("target_id") in ids
    ]
    record = conversation_record(parent, said, calls, scores)
    parent_column = {
        "id": parent_id,
        "models": models_label(parent),
        "seed": parent.get("seed"),
        "status": parent.get("status"),
        "edited": False,
        "n": len(said),
        "measures": finish_record(record, roles, set()),
        "messages": said,
        "outside": bool(parent.get("outside")),
    }
    columns = [parent_column, *branches[:MAX_COLUMNS]]
    places = sorted({(m["day"], m["index"]) for c in columns for m in c["messages"]})
    grid = [
        [next((m for m in c["messages"] if (m["day"], m["index"]) == p), None) for c in columns]
        for p in places[:MAX_ROWS]
    ]
    return {
        "parent": parent_column,
        "at": at,
        "shared": shared[-PREFIX_SHOWN:],
        "shared_total": len(shared),
        "columns": columns,
        "places": [f"{d}:{i}" for d, i in places[:MAX_ROWS]],
        "grid": grid,
        "rows_left_out": max(0, len(places) - MAX_ROWS),
        "columns_left_out": max(0, len(branches) - MAX_COLUMNS),
        "n_branches": len(branches),
        "by_model": _by_model(branches, names, parent_column),
    }


def _by_model(branches: list[dict], names: list[str], parent: dict) -> list[dict]:
    """Per agents' model: its branches' measures (mean, sample sd) and each first reply; the
    parent's row last, with its message at the place of the branches' first reply."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for branch in branches:
        groups[branch["models"]].append(branch)
    out = []
    for model, members in groups.items():
        stats = {name: _spread([b["measures"].get(name) for b in members]) for name in names}
        replies = [(b["id"], b["repetition"], b["seed"], b["first_reply"]) for b in members]
        out.append({"model": model, "n": len(members), "stats": stats, "replies": replies})
    first = next((b["first_reply"] for b in branches if b["first_reply"]), None)
    place = (first["day"], first["index"]) if first else None
    reply = next((m for m in parent["messages"] if (m["day"], m["index"]) == place), None)
    stats = {name: _spread([parent["measures"].get(name)]) for name in names}
    out.append(
        {
            "model": parent["models"],
            "n": 1,
            "stats": stats,
            "replies": [(parent["id"], None, parent["seed"], reply)],
            "parent": True,
        }
    )
    return out


def _spread(values: list) -> tuple[float | None, float | None, int]:
    """(mean, sample standard deviation, n) of the numbers given (None: left out)."""
    present = [float(v) for v in values if isinstance(v, int | float)]
    n = len(present)
    if not n:
        return None, None, 0
    mean = sum(present) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in present) / (n - 1)) if n > 1 else None
    return mean, sd, n
