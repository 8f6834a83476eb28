"""Export and measures of a scope a batch of conversations at a time.

A scope may hold 100,000 conversations of 20 messages: its tables do not fit in memory, so
both read `tables.table_batches` (a few hundred conversations with their rows) and keep only
what they must: export writes each batch out, measures keep a compact record of numbers per
conversation and aggregate per cell at the end, with the same figures as the in-memory path
(`measures.conversation_measures` and `cell_measures` share every step with it).
"""

from __future__ import annotations

import marshal
from array import array
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simulator.analysis.cell_labels import cell_labels
from simulator.analysis.exports import write_listed
from simulator.analysis.measures import (
    _group,
    cell_row_of_columns,
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
    return write_listed(table_batches(store, scope), TABLES, fmt, out_dir, field)


class ScopeMeasures:
    """Measures of a scope fed batch by batch (`add`); `rows()` and `cells()` then give what
    `conversation_measures` and `cell_measures` give on the whole tables.

    Each conversation's `Record` is kept marshalled (about 300 bytes, a quarter of the tuples:
    30 MB at 100,000 conversations; floats round-trip exactly), and a cell's figures are
    gathered one measure column at a time, never as a list of its rows' dicts."""

    def __init__(self) -> None:
        self.records: list[bytes] = []  # marshal.dumps(Record), in scope order
        self.by_cell: dict[Any, array] = {}  # cell key -> record positions, first-seen
        self.first_rows: dict[Any, dict] = {}  # the first conversation row of each cell
        self._roles: dict[str, None] = {}
        self._users: dict[Any, set] = defaultdict(set)

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
            record = conversation_record(
                conv, messages.get(cid, []), calls.get(cid, []), scores.get(cid, [])
            )
            self.by_cell.setdefault(conv.get("cell_key"), array("q")).append(len(self.records))
            self.records.append(marshal.dumps(record))

    def _finish(self) -> tuple[list[str], set]:
        shared = {scorer for scorer, who in self._users.items() if len(who) > 1}
        return list(self._roles), shared

    def _row(self, at: int, roles: list[str], shared: set) -> dict:
        return finish_record(marshal.loads(self.records[at]), roles, shared)

    def rows(self) -> Iterator[dict]:
        """One row per conversation, in scope order, made on demand."""
        roles, shared = self._finish()
        for at in range(len(self.records)):
            yield self._row(at, roles, shared)

    def cells(self) -> list[dict]:
        names = numeric_measures(self.rows())
        labels = cell_labels(list(self.first_rows.values()))
        roles, shared = self._finish()
        cells = []
        for key, positions in self.by_cell.items():
            columns: dict[str, array] = {name: array("d") for name in names}
            for at in positions:  # only the numbers: mean_ci skips None, so they are left out
                row = self._row(at, roles, shared)
                for name, column in columns.items():
                    value = row.get(name)
                    if value is not None:
                        column.append(value)
            first = self._row(positions[0], roles, shared)
            cells.append(cell_row_of_columns(key, first, len(positions), columns, labels))
        return cells

    def __len__(self) -> int:
        return len(self.records)


def measure_scope(store: Any, scope: Scope) -> ScopeMeasures:
    measured = ScopeMeasures()
    for batch in table_batches(store, scope):
        measured.add(batch)
    return measured
