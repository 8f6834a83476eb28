"""Network rounds: one document per (run, round, agent), inserted when the round is complete.

Round 0 is the agents table's answer (no call); round t >= 1 the model's. The id says where a
row belongs (`round_id`), so a rerun's insert of a stored round clashes instead of forking the
run. Fields: `opinion` (0..10), `decision` (Yes/No), `thought`, `friends` (names whose answers
of the round before it read), `replies` (every raw reply of its attempts), `attempts`,
`answer_fallback` (no reply parsed: the previous round's answer was kept). A theory run's
rows (engine/theory_run.py) have no thought, replies or attempts after round 0, and add
`exact_opinion`: the theory's opinion on the 0..10 scale before `opinion` rounds it down.
Rows of a free-chat round (`network.free_chat`) add `said` (the agent's message to its friends,
surrounding whitespace trimmed; '' when the reply was empty; the raw reply is in the call
ledger) and `heard` ({friend's name: message}, the messages its answer prompt showed; itself
left out on a self-loop); rows of other rounds, and every theory row, have neither field.
"""

from __future__ import annotations

from typing import Any

from simulator.store.batched import BatchReader
from simulator.store.counting import count
from simulator.store.foreign import ours
from simulator.store.indexes import ensure_marker_index

SCHEMA_VERSION = 1


def round_id(run_id: str, round_index: int, agent_index: int) -> str:
    return f"{run_id}-r{round_index:04d}-a{agent_index:05d}"


class NetworkRoundsRepository:
    def __init__(self, db: Any):
        self._col = db.network_rounds
        self._batched = BatchReader(self._col)

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), ("round", 1), ("agent_index", 1)])
        ensure_marker_index(self._col)

    @staticmethod
    def document(doc: dict) -> dict:
        """The stored form of a round row, its id derived from (run, round, agent)."""
        doc = {"schema_version": SCHEMA_VERSION, **doc}
        doc["_id"] = round_id(doc["conversation_id"], doc["round"], doc["agent_index"])
        return doc

    def for_run(self, run_id: str) -> list[dict]:
        """Every stored row of a run, by round then agent."""
        return self.for_runs([run_id])[run_id]

    def for_runs(self, run_ids: list[str]) -> dict[str, list[dict]]:
        grouped = self._batched.grouped(run_ids, "round")
        for rows in grouped.values():
            rows.sort(key=lambda d: (d["round"], d["agent_index"]))
        return grouped

    def count(self, run_id: str) -> int:
        return count(self._col, ours({"conversation_id": run_id}))
