"""A world's rows: one document per (run, unit, agent), inserted when the unit is complete.

A world whose runs advance in steps (the 2D community's steps, the opinion network's rounds)
stores each agent's part of a finished step as one row in its own collection. The id says where
a row belongs (`RowsLayout.row_id`), so a rerun's insert of a stored step clashes instead of
forking the run, as messages do. What differs between worlds is only the layout: the
collection, the field that numbers the steps (`unit`) and the id's format; each world's fields
are described beside its layout (grid_steps.py, network_rounds.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator.store.batched import BatchReader
from simulator.store.counting import count
from simulator.store.foreign import ours
from simulator.store.indexes import ensure_marker_index

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RowsLayout:
    """Where and how a world's rows are stored: `collection`, the field numbering its steps
    (`unit`: "step", "round"), and `id_format`, a format string over `run`, `unit` and
    `agent` (the run id, the step's number, the agent's index)."""

    collection: str
    unit: str
    id_format: str

    def row_id(self, run_id: str, unit: int, agent_index: int) -> str:
        return self.id_format.format(run=run_id, unit=unit, agent=agent_index)


def world_layout(collection: str) -> RowsLayout | None:
    """The layout of a registered world's rows in `collection` (its domain part's
    `ROWS_COLLECTION` and `ROW_UNIT`; the id `<run>-<unit's initial><unit>-a<agent>`), or None
    when no world stores its rows there."""
    from simulator.domain.world import domain_of
    from simulator.worlds import names

    for kind in names():
        domain = domain_of(kind)
        if collection == domain.ROWS_COLLECTION and domain.ROW_UNIT:
            unit = domain.ROW_UNIT
            return RowsLayout(collection, unit, f"{{run}}-{unit[0]}{{unit:05d}}-a{{agent:05d}}")
    return None


class WorldRowsRepository:
    """The rows of one world's collection (`layout`)."""

    def __init__(self, db: Any, layout: RowsLayout):
        self.layout = layout
        self._col = db[layout.collection]
        self._batched = BatchReader(self._col)

    @property
    def collection(self) -> str:
        return self.layout.collection

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), (self.layout.unit, 1), ("agent_index", 1)])
        ensure_marker_index(self._col)

    def document(self, doc: dict) -> dict:
        """The stored form of a row, its id derived from (run, unit, agent)."""
        doc = {"schema_version": SCHEMA_VERSION, **doc}
        unit = doc[self.layout.unit]
        doc["_id"] = self.layout.row_id(doc["conversation_id"], unit, doc["agent_index"])
        return doc

    def for_run(self, run_id: str) -> list[dict]:
        """Every stored row of a run, by unit then agent."""
        return self.for_runs([run_id])[run_id]

    def for_runs(self, run_ids: list[str]) -> dict[str, list[dict]]:
        """The rows of a batch of runs, each list by unit then agent."""
        unit = self.layout.unit
        grouped = self._batched.grouped(run_ids, unit)
        for rows in grouped.values():
            rows.sort(key=lambda d: (d[unit], d["agent_index"]))
        return grouped

    def count(self, run_id: str) -> int:
        return count(self._col, ours({"conversation_id": run_id}))
