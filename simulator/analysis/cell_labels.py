"""Short names for a scope's cells: only the factors that differ between them.

The stored `cell_label` names every factor of a cell; tables, plots and the report label each
cell by what tells it apart from the others in the scope (`cell_labels`), and a cell of forks
by where its conversations start (`branch_part`).
"""

from __future__ import annotations

from collections import Counter


def branch_part(row: dict, name_parent: bool = False) -> str:
    """What a cell's label says of where its conversations start: `from 1:3 edited` for
    forks (`of conv_…` when the scope forks several parents), `whole run` otherwise."""
    if not row.get("fork_at"):
        return "whole run"
    edited = " edited" if row.get("edited") else ""
    parent = f" of {row.get('parent_id')}" if name_parent else ""
    return f"from {row['fork_at']}{edited}{parent}"


def _varies(rows: list[dict], column: str) -> bool:
    return len({repr(r.get(column)) for r in rows}) > 1


def _models(row: dict, columns: list[str]) -> str:
    """One model name when every role of the cell uses it, else `Role→model` per role."""
    used = {c.removeprefix("llm_"): row.get(c) for c in columns if row.get(c) is not None}
    if len(set(used.values())) == 1:
        return str(next(iter(used.values())))
    return " ".join(f"{role}→{model}" for role, model in used.items())


def cell_labels(conversations: list[dict]) -> dict[str, str]:
    """Each cell named by only the factors that differ between the cells given, in full:
    e.g. `Guard=2 Prisoner=1 · Personality=abusive`. `conversations` are rows of the
    `conversations` table (one per conversation; the first of each cell is used).

    The stored `cell_label` names every factor and is shortened on a narrow screen until two
    cells look the same; this one stays short, and cells whose factors are all equal still
    get distinct labels (their key is added)."""
    first: dict[str, dict] = {}
    for row in conversations:
        first.setdefault(str(row.get("cell_key")), row)
    if len(first) <= 1:
        return {key: str(row.get("cell_label") or key) for key, row in first.items()}
    rows = list(first.values())
    columns = list(dict.fromkeys(k for r in rows for k in r))
    llm_columns = [c for c in columns if c.startswith("llm_")]
    agent_columns = [c for c in columns if c.startswith("agents_")]
    variants = [c for c in columns if c.startswith("variant_") and _varies(rows, c)]
    short = {c: c.removeprefix("variant_").split("/")[-1] for c in variants}
    if len(set(short.values())) < len(short):  # Guard/Goal and Prisoner/Goal: keep the role
        short = {c: c.removeprefix("variant_") for c in variants}
    show_models = any(_varies(rows, c) for c in llm_columns)
    show_branch = any(_varies(rows, c) for c in ("parent_id", "fork_at", "edited"))
    parents = {r.get("parent_id") for r in rows if r.get("parent_id")}
    show_agents = any(_varies(rows, c) for c in agent_columns)
    labels: dict[str, str] = {}
    for key, row in first.items():
        parts = []
        if show_models:
            parts.append(_models(row, llm_columns))
        if show_agents:
            parts.append(
                " ".join(f"{c.removeprefix('agents_')}={row.get(c) or 0}" for c in agent_columns)
            )
        for column, name in (
            ("manager_llm", "manager"),
            ("summarizer_llm", "summarizer"),
            ("days", "days"),
            ("speaker_method", "speaker"),
        ):
            if _varies(rows, column):
                value = row.get(column)
                parts.append(f"{name}={'none' if value is None else value}")
        if variants:
            parts.append(" ".join(f"{short[c]}={row.get(c) or '(default)'}" for c in variants))
        if show_branch:
            parts.append(branch_part(row, len(parents) > 1))
        labels[key] = " · ".join(parts) or str(row.get("cell_label") or key)
    seen = Counter(labels.values())
    return {k: f"{v} · cell {k}" if seen[v] > 1 else v for k, v in labels.items()}
