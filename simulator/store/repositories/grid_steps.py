"""Grid steps: one document per (run, step, agent), inserted when the step is complete.

The id says where a row belongs (`step_id`), so a rerun's insert of a stored step clashes
instead of forking the run, as messages do. Field by field (DESIGN "Worlds"):
`position_before`/`position_after` [x, y], `message`, `recipients` (names that heard this
agent's message), `heard_from` (names whose messages it read), `memory` (after this step),
`move_reply` (the raw reply), `move`, `move_fallback` (the parse found no command).
"""

from __future__ import annotations

from typing import Any

from simulator.store.batched import BatchReader
from simulator.store.counting import count
from simulator.store.foreign import ours
from simulator.store.indexes import ensure_marker_index

SCHEMA_VERSION = 1


def step_id(run_id: str, step: int, agent_index: int) -> str:
    return f"{run_id}-s{step:05d}-a{agent_index:04d}"


class GridStepsRepository:
    def __init__(self, db: Any):
        self._col = db.grid_steps
        self._batched = BatchReader(self._col)

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), ("step", 1), ("agent_index", 1)])
        ensure_marker_index(self._col)

    @staticmethod
    def document(doc: dict) -> dict:
        """The stored form of a step row, its id derived from (run, step, agent)."""
        doc = {"schema_version": SCHEMA_VERSION, **doc}
        doc["_id"] = step_id(doc["conversation_id"], doc["step"], doc["agent_index"])
        return doc

    def for_run(self, run_id: str) -> list[dict]:
        """Every stored row of a run, by step then agent."""
        return self.for_runs([run_id])[run_id]

    def for_runs(self, run_ids: list[str]) -> dict[str, list[dict]]:
        """The rows of a batch of runs, each list by step then agent."""
        grouped = self._batched.grouped(run_ids, "step")
        for rows in grouped.values():
            rows.sort(key=lambda d: (d["step"], d["agent_index"]))
        return grouped

    def count(self, run_id: str) -> int:
        return count(self._col, ours({"conversation_id": run_id}))
