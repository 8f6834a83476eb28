"""Scores written by scorers beside messages and conversations, never into the transcript.

One document per (scorer, target, user who scored): re-running a scorer skips what the same
user already scored, so scoring is resumable and idempotent like sweeps, and one researcher's
scores never make another's scoring skip. Scores written before scores carried `scored_by`
(ids without the user part, `scored_by` None) belong to no user: they are kept and shown, and
make no user's scoring skip.
"""

from __future__ import annotations

from typing import Any

from simulator.domain.clock import now

SCHEMA_VERSION = 1
TARGET_KINDS = ("message", "conversation")


def score_id(scorer: str, target_kind: str, target_id: str, scored_by: str | None) -> str:
    """`scorer|kind|target|user`; without a user, the form scores had before they named one."""
    base = f"{scorer}|{target_kind}|{target_id}"
    return base if scored_by is None else f"{base}|{scored_by}"


class ScoresRepository:
    def __init__(self, db: Any):
        self._col = db.scores

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), ("scorer", 1)])
        self._col.create_index([("sweep_id", 1), ("scorer", 1)])

    def has(
        self, scorer: str, target_kind: str, target_id: str, scored_by: str | None = None
    ) -> bool:
        doc_id = score_id(scorer, target_kind, target_id, scored_by)
        return self._col.find_one({"_id": doc_id}, {"_id": 1}) is not None

    def scored_ids(
        self, scorer: str, conversation_ids: list[str], scored_by: str | None = None
    ) -> set[str]:
        """Target ids this user already scored with this scorer within these conversations."""
        found: set[str] = set()
        for start in range(0, len(conversation_ids), 500):
            chunk = conversation_ids[start : start + 500]
            query = {"scorer": scorer, "scored_by": scored_by, "conversation_id": {"$in": chunk}}
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
        scored_by: str | None = None,
        sweep_id: str | None = None,
        details: dict | None = None,
    ) -> bool:
        """Store one score; False if this user had already scored this target with this scorer."""
        from pymongo.errors import DuplicateKeyError

        assert target_kind in TARGET_KINDS
        doc = {
            "_id": score_id(scorer, target_kind, target_id, scored_by),
            "schema_version": SCHEMA_VERSION,
            "scorer": scorer,
            "scored_by": scored_by,
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
        query = {"conversation_id": conversation_id, "schema_version": {"$exists": True}}
        self._col.delete_many(query)  # only this tool's scores
