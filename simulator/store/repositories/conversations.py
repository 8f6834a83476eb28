"""Conversations: spec, status (pending → running → done | failed | interrupted), summaries."""

from __future__ import annotations

import contextlib
from typing import Any

from pymongo.errors import DuplicateKeyError

from simulator.domain.ids import new_id
from simulator.errors import NotFound, PermissionRefused
from simulator.store.clock import now
from simulator.store.foreign import DEFAULT_IMPORT, foreign_refusal, is_foreign_id, ours
from simulator.store.indexes import ensure_sparse_unique

SCHEMA_VERSION = 1
STATUSES = ("pending", "running", "done", "failed", "interrupted")


class ConversationsRepository:
    import_hint = DEFAULT_IMPORT  # open_store sets the command for this database

    def __init__(self, db: Any):
        self._col = db.conversations
        self._summaries = db.summaries

    def ensure_indexes(self) -> None:
        self._col.create_index([("experiment_id", 1), ("created_at", -1)])
        self._col.create_index([("sweep_id", 1), ("status", 1)])
        ensure_sparse_unique(self._col, "key")  # the reference tool's conversations lack `key`
        self._summaries.create_index([("conversation_id", 1), ("day", 1)])

    @staticmethod
    def new_document(doc: dict) -> dict:
        """A pending conversation document; `doc` holds spec, agents, owner and the like."""
        conversation_id = new_id("conv")
        return {
            "_id": conversation_id,
            "key": conversation_id,  # sweeps set a deterministic key instead
            "schema_version": SCHEMA_VERSION,
            "status": "pending",
            "error": None,
            "summaries": [],
            "counters": {},
            "created_at": now(),
            "started_at": None,
            "finished_at": None,
            **doc,
        }

    def create(self, doc: dict) -> dict:
        for _ in range(8):
            full = self.new_document(doc)
            try:
                self._col.insert_one(full)
                return full
            except DuplicateKeyError as exc:
                if doc.get("key") and "key" in str(exc):
                    raise
        raise RuntimeError("could not allocate a unique conversation id")

    def get(self, conversation_id: str) -> dict:
        doc = self._col.find_one(ours({"_id": conversation_id}))
        if doc is None:
            if is_foreign_id(self._col, conversation_id):
                message, fix = foreign_refusal("conversation", conversation_id, self.import_hint)
                raise NotFound(message, fix=fix)
            raise NotFound(
                f"no conversation with id {conversation_id!r}",
                fix="run 'llm-sim conversation list' to see the ids",
            )
        return doc

    def list(
        self, experiment_id: str | None = None, owner: str | None = None, limit: int = 0
    ) -> list[dict]:
        query: dict = ours()
        if experiment_id:
            query["experiment_id"] = experiment_id
        if owner:
            query["owner"] = owner
        return list(self._col.find(query).sort("created_at", -1).limit(limit))

    @staticmethod
    def _guard(conversation_id: str, lease_owner: str | None) -> dict:
        """A worker that lost its lease must not overwrite the new owner's writes."""
        return {"_id": conversation_id, **({"lease_owner": lease_owner} if lease_owner else {})}

    def set_status(
        self,
        conversation_id: str,
        status: str,
        error: str | None = None,
        lease_owner: str | None = None,
    ) -> None:
        assert status in STATUSES
        changes: dict = {"status": status, "error": error}
        if status == "running":
            changes["started_at"] = now()
        elif status in ("done", "failed", "interrupted"):
            changes["finished_at"] = now()
        self._col.update_one(self._guard(conversation_id, lease_owner), {"$set": changes})

    def set_counters(
        self, conversation_id: str, counters: dict, lease_owner: str | None = None
    ) -> None:
        self._col.update_one(
            self._guard(conversation_id, lease_owner), {"$set": {"counters": counters}}
        )

    def add_summary(self, conversation_id: str, summary: dict, all_summaries: list[dict]) -> None:
        """Stored on its own, and the whole list on the conversation (no $push: see DESIGN)."""
        with contextlib.suppress(DuplicateKeyError):
            self._summaries.insert_one(summary)
        self._col.update_one({"_id": conversation_id}, {"$set": {"summaries": all_summaries}})

    def set_summaries(self, conversation_id: str, listed: list[dict]) -> None:
        """The conversation's summary list, whole (no $push: see DESIGN)."""
        self._col.update_one({"_id": conversation_id}, {"$set": {"summaries": listed}})

    def summaries(self, conversation_id: str) -> list[dict]:
        query = ours({"conversation_id": conversation_id})
        return list(self._summaries.find(query).sort("day", 1))

    def require_owner(self, conversation_id: str, actor: str, action: str) -> dict:
        doc = self.get(conversation_id)
        if doc["owner"] != actor:
            raise PermissionRefused(
                f"conversation {conversation_id} belongs to {doc['owner']!r}; only its owner may "
                f"{action} it (you are {actor!r})",
                fix=f"ask {doc['owner']} to do it",
            )
        return doc

    def delete(self, conversation_id: str) -> None:
        self._col.delete_one(ours({"_id": conversation_id}))
        self._summaries.delete_many(ours({"conversation_id": conversation_id}))
