"""Conversations: spec, status (pending → running → done | failed | interrupted), summaries."""

from __future__ import annotations

import contextlib
from typing import Any

from simulator.domain.clock import as_datetime, now
from simulator.domain.ids import new_id
from simulator.domain.vocabulary import CONVERSATION_STATUSES, FINISHED_STATUSES
from simulator.errors import NotFound, PermissionRefused
from simulator.store import conversation_questions as questions
from simulator.store.batched import BatchReader
from simulator.store.conversation_rows import rows_table
from simulator.store.counting import count
from simulator.store.embedded import OURS_FIELD, by_ids
from simulator.store.embedded_writes import set_fields_one
from simulator.store.foreign import DEFAULT_IMPORT, foreign_refusal, is_foreign_id, ours
from simulator.store.indexes import ensure_marker_index, ensure_sparse_unique

SCHEMA_VERSION = 1
NEWEST_FIRST = {"created_at": -1, "_id": -1}  # _id breaks ties: a sweep creates many per ms


class ConversationsRepository:
    import_hint = DEFAULT_IMPORT  # open_store sets the command for this database

    def __init__(self, db: Any):
        self._col = db.conversations
        self._summaries = db.summaries
        self._batched_summaries = BatchReader(self._summaries)  # see summaries_for

    def ensure_indexes(self) -> None:
        self._col.create_index([("experiment_id", 1), ("created_at", -1)])
        self._col.create_index([("created_at", -1)])  # the newest page, unfiltered (nx-27017
        # refuses `_id` inside a compound index, so ties are broken by sorting, not the index)
        self._col.create_index([("sweep_id", 1), ("status", 1)])
        ensure_marker_index(self._col)
        ensure_sparse_unique(self._col, "key")  # the reference tool's conversations lack `key`
        self._summaries.create_index([("conversation_id", 1), ("day", 1)])
        rows_table(self._col)  # the embedded store's rows: built once for an older store

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
        from pymongo.errors import DuplicateKeyError

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
        table = rows_table(self._col)
        if table is not None:  # by primary key: a query would index every conversation
            found = [d for d in by_ids(table, [conversation_id]) if OURS_FIELD in d]
            doc = found[0] if found else None
        else:
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

    @staticmethod
    def _listing(experiment_id: str | None, owner: str | None) -> dict:
        query: dict = ours()
        if experiment_id:
            query["experiment_id"] = experiment_id
        if owner:
            query["owner"] = owner
        return query

    def list(
        self, experiment_id: str | None = None, owner: str | None = None, limit: int = 0
    ) -> list[dict]:
        table = rows_table(self._col)
        if table is not None:
            return self.page(experiment_id, owner, limit or None)
        query = self._listing(experiment_id, owner)
        return list(self._col.find(query).sort("created_at", -1).limit(limit))

    def count(self, experiment_id: str | None = None, owner: str | None = None) -> int:
        table = rows_table(self._col)
        if table is not None:
            return questions.count(table, experiment_id, owner)
        return count(self._col, self._listing(experiment_id, owner))

    def page(
        self,
        experiment_id: str | None = None,
        owner: str | None = None,
        limit: int | None = 50,
        only: set[str] | None = None,
        exclude: set[str] | None = None,
    ) -> list[dict]:
        """The newest `limit` matching conversations (None: all), newest first; `only` and
        `exclude` restrict the ids (favourites first: a page of them, then the rest).

        The embedded store asks its rows' indexes (conversation_rows.py). Elsewhere a page
        reads ids first (a projection sorted on the indexed created_at, with a limit), then the
        page's documents by `_id`; all of them come through an aggregation cursor (mongomock's
        find() cursor copies its whole result list on every row: N x N for N documents).
        """
        table = rows_table(self._col)
        if table is not None:
            return self.embedded_page(table, experiment_id, owner, limit, only, exclude)
        query = self._listing(experiment_id, owner)
        if only is not None:
            query["_id"] = {"$in": sorted(only)}
        elif exclude:
            query["_id"] = {"$nin": sorted(exclude)}
        if limit is None:
            return list(self._col.aggregate([{"$match": query}, {"$sort": NEWEST_FIRST}]))
        # one sort key in the store (its created_at indexes serve it; a second key would sort
        # every match in memory); a sweep creates many per millisecond, so the page's last
        # time is read whole and the page cut by (created_at, _id): the same on every store
        fields = {"_id": 1, "created_at": 1}
        head = list(self._col.find(query, fields).sort("created_at", -1).limit(limit + 1))
        if not head:
            return []
        if len(head) > limit and head[limit]["created_at"] == head[limit - 1]["created_at"]:
            ties = self._col.find({**query, "created_at": head[limit]["created_at"]}, fields)
            head = list({d["_id"]: d for d in [*head, *ties]}.values())  # the cut is in a tie
        ids = [d["_id"] for d in sorted(head, key=_newest, reverse=True)[:limit]]
        docs = list(self._col.find({"_id": {"$in": ids}}))
        return sorted(docs, key=lambda d: (as_datetime(d["created_at"]), d["_id"]), reverse=True)

    @staticmethod
    def embedded_page(
        table: Any,
        experiment_id: str | None,
        owner: str | None,
        limit: int | None,
        only: set[str] | None = None,
        exclude: set[str] | None = None,
    ) -> list[dict]:
        """`page` on the embedded store: the ids from its rows' indexes, newest first, then
        those documents by primary key (`only`: those ids, read by id)."""

        def keep(doc: dict) -> bool:
            return (
                OURS_FIELD in doc
                and (not experiment_id or doc.get("experiment_id") == experiment_id)
                and (not owner or doc.get("owner") == owner)
            )

        if only is not None:
            docs = sorted(filter(keep, by_ids(table, sorted(only))), key=_newest, reverse=True)
            return docs if limit is None else docs[:limit]
        ids = questions.newest(table, experiment_id, owner, limit, exclude or ())
        return list(by_ids(table, ids))

    @staticmethod
    def guard(conversation_id: str, lease_owner: str | None) -> dict:
        """A worker that lost its lease must not overwrite the new owner's writes."""
        return {"_id": conversation_id, **({"lease_owner": lease_owner} if lease_owner else {})}

    def set_status(
        self,
        conversation_id: str,
        status: str,
        error: str | None = None,
        lease_owner: str | None = None,
        also: dict | None = None,
    ) -> None:
        """Set the status (and `also`: counters, the summary list) in one write."""
        assert status in CONVERSATION_STATUSES
        changes: dict = {"status": status, "error": error, **(also or {})}
        if status == "running":
            changes["started_at"] = now()
        elif status in FINISHED_STATUSES:
            changes["finished_at"] = now()
        set_fields_one(self._col, self.guard(conversation_id, lease_owner), changes)

    def add_summary(
        self,
        conversation_id: str,
        summary: dict,
        all_summaries: list[dict],
        lease_owner: str | None = None,
        also: dict | None = None,
    ) -> None:
        """Stored on its own, and the whole list on the conversation (no $push: see DESIGN),
        with `also` (the counters) in the same write."""
        from pymongo.errors import DuplicateKeyError

        with contextlib.suppress(DuplicateKeyError):
            self._summaries.insert_one(summary)
        fields = {"summaries": all_summaries, **(also or {})}
        set_fields_one(self._col, self.guard(conversation_id, lease_owner), fields)

    def summaries(self, conversation_id: str) -> list[dict]:
        query = ours({"conversation_id": conversation_id})
        return list(self._summaries.find(query).sort("day", 1))

    def summaries_for(self, conversation_ids: list[str]) -> dict[str, list[dict]]:
        """The summaries of a batch of conversations, each list by day as `summaries` gives
        it: one query per 500 on a server (see batched.py); on the embedded store each
        conversation's id range (summary ids start with the conversation id), never its
        whole-collection index."""
        return self._batched_summaries.grouped(conversation_ids, "day")

    def get_many(self, conversation_ids: list[str]) -> list[dict]:
        """This tool's conversations with these ids, in the order given, missing ones skipped:
        one query per 500 (by `_id` from the embedded store's table, which builds no index)."""
        table = rows_table(self._col)
        if table is not None:
            return [doc for doc in by_ids(table, conversation_ids) if OURS_FIELD in doc]
        found: dict[str, dict] = {}
        for start in range(0, len(conversation_ids), 500):
            chunk = conversation_ids[start : start + 500]
            found.update((d["_id"], d) for d in self._col.find(ours({"_id": {"$in": chunk}})))
        return [found[cid] for cid in conversation_ids if cid in found]

    def forks_of(self, conversation_id: str) -> list[dict]:
        """The conversations forked from this one (see store/lineage.py), oldest first."""
        query = ours({"fork_of": conversation_id})
        found = list(self._col.find(query))
        return sorted(found, key=lambda d: (str(as_datetime(d.get("created_at"))), d["_id"]))

    def fork_links(self, experiment_id: str) -> list[dict]:
        """Every fork of the experiment's conversations as {_id, fork_of, created_at,
        fork_repetition}: one query, from which a family's tree is built in memory (a fork
        belongs to its parent's experiment)."""
        query = ours({"experiment_id": experiment_id, "fork_of": {"$ne": None}})
        fields = {"_id": 1, "fork_of": 1, "created_at": 1, "fork_repetition": 1}
        return [d for d in self._col.find(query, fields) if d.get("fork_of")]

    def ids(self, experiment_id: str) -> list[str]:
        """The ids of the experiment's conversations in the order of `list` (newest first),
        without their documents (see SweepsRepository.conversation_ids)."""
        table = rows_table(self._col)
        if table is not None:
            return questions.newest(table, experiment_id, None, None)
        query = self._listing(experiment_id, None)
        cursor = self._col.find(query, {"_id": 1, "created_at": 1}).sort("created_at", -1)
        return [d["_id"] for d in cursor]

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


def _newest(doc: dict) -> tuple:
    """Newest first is the largest (created_at, _id)."""
    return (as_datetime(doc["created_at"]), doc["_id"])
