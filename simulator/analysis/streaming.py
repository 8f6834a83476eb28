"""Export and measures of a scope a batch of conversations at a time.

A scope may hold 100,000 conversations of 20 messages: its tables do not fit in memory, so
both read `tables.table_batches` (a few hundred conversations with their rows) and keep only
what they must: export writes each batch out, measures keep a compact record of numbers per
conversation and aggregate per cell at the end, with the same figures as the in-memory path
(`measures.conversation_measures` and `cell_measures` share every step with it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simulator.analysis.exports import write_batches
from simulator.analysis.measures import (
    Record,
    _group,
    cell_labels,
    cell_row,
    conversation_record,
    finish_record,
    numeric_measures,
)
from simulator.analysis.scope import Scope
from simulator.analysis.tables import TABLES, table_batches


def export_scope(
    store: Any, scope: Scope, fmt: str, out_dir: Path, field: str = "--output"
) -> list[dict]:
    """Write every table of the scope to `out_dir`; one entry per table: name, path, rows."""
    paths, rows = write_batches(table_batches(store, scope), TABLES, fmt, out_dir, field)
    return [
        {"table": name, "path": str(path), "rows": rows[name]}
        for name, path in zip(TABLES, paths, strict=True)
    ]


class ScopeMeasures:
    """Measures of a scope fed batch by batch (`add`); `rows()` and `cells()` then give what
    `conversation_measures` and `cell_measures` give on the whole tables."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.by_cell: dict[Any, list[int]] = {}  # cell key -> record positions, first-seen
        self.first_rows: dict[Any, dict] = {}  # the first conversation row of each cell
        self._roles: dict[str, None] = {}
        self._users: dict[Any, set] = defaultdict(set)
        self._same: dict[str, str] = {}  # one copy of each repeated text (cell keys, labels)

    def add(self, batch: dict[str, list[dict]]) -> None:
        messages = _group(sorted(batch["messages"], key=lambda m: m.get("seq") or 0))
        calls = _group(batch["calls"])
        scores = _group(batch["scores"])
        for score in batch["scores"]:
            self._users[score.get("scorer")].add(score.get("scored_by"))
        for conv in batch["conversations"]:
            self._roles.update(
                (k.removeprefix("agents_"), None) for k in conv if k[:7] == "agents_"
            )
            self.first_rows.setdefault(conv.get("cell_key"), conv)
            cid = conv["conversation_id"]
            ids, fixed, roles, values = conversation_record(
                conv, messages.get(cid, []), calls.get(cid, []), scores.get(cid, [])
            )
            ids = tuple(self._same.setdefault(v, v) if isinstance(v, str) else v for v in ids)
            self.by_cell.setdefault(conv.get("cell_key"), []).append(len(self.records))
            self.records.append((ids, fixed, roles, values))

    def _finish(self) -> tuple[list[str], set]:
        shared = {scorer for scorer, who in self._users.items() if len(who) > 1}
        return list(self._roles), shared

    def rows(self) -> Iterator[dict]:
        """One row per conversation, in scope order, made on demand."""
        roles, shared = self._finish()
        for record in self.records:
            yield finish_record(record, roles, shared)

    def cells(self) -> list[dict]:
        names = numeric_measures(self.rows())
        labels = cell_labels(list(self.first_rows.values()))
        roles, shared = self._finish()
        return [
            cell_row(
                key, [finish_record(self.records[i], roles, shared) for i in at], names, labels
            )
            for key, at in self.by_cell.items()
        ]

    def __len__(self) -> int:
        return len(self.records)


def measure_scope(store: Any, scope: Scope) -> ScopeMeasures:
    measured = ScopeMeasures()
    for batch in table_batches(store, scope):
        measured.add(batch)
    return measured
