"""Scores written by scorers beside messages and conversations, never into the transcript.

One document per (scorer, target): re-running a scorer skips what it already scored, so
scoring is resumable and idempotent like sweeps.
"""

from __future__ import annotations

from typing import Any

from pymongo.errors import DuplicateKeyError

from simulator.store.clock import now

SCHEMA_VERSION = 1
TARGET_KINDS = ("message", "conversation")


def score_id(scorer: str, target_kind: str, target_id: str) -> str:
    return f"{scorer}|{target_kind}|{target_id}"


class ScoresRepository:
    def __init__(self, db: Any):
        self._col = db.scores

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), ("scorer", 1)])
        self._col.create_index([("sweep_id", 1), ("scorer", 1)])

    def has(self, scorer: str, target_kind: str, target_id: str) -> bool:
        return (
            self._col.find_one({"_id": score_id(scorer, target_kind, target_id)}, {"_id": 1})
            is not None
        )

    def scored_ids(self, scorer: str, conversation_ids: list[str]) -> set[str]:
        """Target ids this scorer already scored within these conversations."""
        found: set[str] = set()
        for start in range(0, len(conversation_ids), 500):
            chunk = conversation_ids[start : start + 500]
            query = {"scorer": scorer, "conversation_id": {"$in": chunk}}
            found.update(d["target_id"] for d in self._col.find(query, {"target_id": 1}))
        return found

    def add(
        self,
        scorer: str,
        target_kind: str,
        target_id: str,
        values: dict,
        *,
        conversation_id: str,
        sweep_id: str | None = None,
        details: dict | None = None,
    ) -> bool:
        """Store one score; False if this scorer had already scored this target."""
        assert target_kind in TARGET_KINDS
        doc = {
            "_id": score_id(scorer, target_kind, target_id),
            "schema_version": SCHEMA_VERSION,
            "scorer": scorer,
            "target_kind": target_kind,
            "target_id": target_id,
            "conversation_id": conversation_id,
            "sweep_id": sweep_id,
            "values": values,
            "details": details or {},
            "created_at": now(),
        }
        try:
            self._col.insert_one(doc)
            return True
        except DuplicateKeyError:
            return False

    def for_conversations(
        self, conversation_ids: list[str], scorer: str | None = None
    ) -> list[dict]:
        found: list[dict] = []
        for start in range(0, len(conversation_ids), 500):
            query: dict = {"conversation_id": {"$in": conversation_ids[start : start + 500]}}
            if scorer:
                query["scorer"] = scorer
            found.extend(self._col.find(query))
        return found

    def delete_for(self, conversation_id: str) -> None:
        self._col.delete_many({"conversation_id": conversation_id})
