"""A world's runs summarised per sweep cell: each measure's mean with its 95% interval, the
cells named by the factors that differ, and series (per step, per round) averaged over runs.

The grid and the network summarise their runs this way; each adds its own fields to a cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from simulator.analysis.measures import mean_ci


def mean_series(series: list[list[float | None] | None]) -> list[float | None]:
    """Index by index mean over runs (runs of different lengths: each index over those that
    reached it)."""
    longest = max((len(s) for s in series if s), default=0)
    means: list[float | None] = []
    for at in range(longest):
        values = [s[at] for s in series if s and at < len(s) and s[at] is not None]
        means.append(sum(values) / len(values) if values else None)
    return means


def short_labels(
    first: dict[str, dict], shown: Callable[[str, Any], str] = lambda factor, value: str(value)
) -> dict[str, str]:
    """Each cell named by the factors that differ between the cells (`llm=mock:b`), as the
    chat measures name theirs; the full stored label when only one cell or nothing differs.
    `shown` writes a factor's value (a network's graph spec is a mapping, named shorter)."""
    factors = list(dict.fromkeys(k for row in first.values() for k in row.get("cell") or {}))
    varying = [
        k for k in factors if len({str((r.get("cell") or {}).get(k)) for r in first.values()}) > 1
    ]
    labels = {}
    for key, row in first.items():
        cell = row.get("cell") or {}
        short = " ".join(f"{k}={shown(k, cell.get(k))}" for k in varying)
        labels[key] = short if len(first) > 1 and short else str(row["cell_label"])
    return labels


def summarise_cells(
    rows: list[dict],
    measures: Iterable[str],
    head: Callable[[list[dict]], dict],
    tail: Callable[[list[dict]], dict],
    shown: Callable[[str, Any], str] = lambda factor, value: str(value),
    number: Callable[[Any], float | None] = lambda value: value,
) -> list[dict]:
    """One entry per cell (first-seen order) of the runs' summary rows (each with `cell_key`,
    `cell_label` and `cell`): its key, labels, the world's `head(members)` fields, n runs,
    `<measure>_mean/_ci_low/_ci_high` of each of `measures` (`number` reads a row's value),
    then the world's `tail(members)` fields."""
    cells: dict[str, list[dict]] = {}
    for row in rows:
        cells.setdefault(row["cell_key"], []).append(row)
    labels = short_labels({key: members[0] for key, members in cells.items()}, shown)
    names = list(measures)
    out = []
    for key, members in cells.items():
        cell: dict[str, Any] = {
            "cell_key": key,
            "cell_label": members[0]["cell_label"],
            "label": labels[key],
            **head(members),
            "n": len(members),
        }
        for name in names:
            mean, low, high = mean_ci(number(r.get(name)) for r in members)
            cell[f"{name}_mean"], cell[f"{name}_ci_low"], cell[f"{name}_ci_high"] = mean, low, high
        cell.update(tail(members))
        out.append(cell)
    return out
