"""Sweeps and their conversations: create, look up, count, page and reset; the claims that let
several workers share a sweep are in sweep_claims.py.

Queries on a sweep's conversations say `{"$eq": value}` rather than a bare value and avoid
`$in`: the same on MongoDB, but nx-27017 (MongoDB's protocol over SQLite) searches its
(sweep_id, status) index only for `$eq` and scans the collection otherwise (at 100,000
conversations the failed page took 0.83 s against 0.02 s).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simulator.domain.clock import now
from simulator.domain.ids import new_id
from simulator.domain.vocabulary import CONVERSATION_STATUSES
from simulator.errors import NotFound
from simulator.store import conversation_questions as questions
from simulator.store.bulk_insert import insert_new
from simulator.store.conversation_rows import rows_table
from simulator.store.counting import count_by, is_server_collection
from simulator.store.embedded import by_ids
from simulator.store.embedded_writes import rewrite
from simulator.store.foreign import ours
from simulator.store.indexes import ensure_sparse_unique
from simulator.store.repositories.sweep_claims import SweepClaims
from simulator.store.sweep_summary import kept_totals, summary

SCHEMA_VERSION = 1


class SweepsRepository(SweepClaims):
    def __init__(self, db: Any, lock_path: Path | None):
        self._sweeps = db.sweeps
        self._convs = db.conversations
        self._lock_path = lock_path

    def ensure_indexes(self) -> None:
        self._sweeps.create_index([("experiment_id", 1)])
        ensure_sparse_unique(self._sweeps, "key")
        self._convs.create_index([("sweep_id", 1), ("order", 1)])

    # -- sweeps ------------------------------------------------------------------------------

    def find_by_key(self, key: str) -> dict | None:
        return self._sweeps.find_one(ours({"key": key}))

    def create(self, doc: dict) -> dict:
        """Insert a sweep; if another process created the same one (same key) first, return it."""
        from pymongo.errors import DuplicateKeyError

        for _ in range(8):
            full = {
                "_id": new_id("sweep"),
                "schema_version": SCHEMA_VERSION,
                "created_at": now(),
                **doc,
            }
            try:
                self._sweeps.insert_one(full)
                return full
            except DuplicateKeyError:
                same = self.find_by_key(doc["key"])
                if same is not None:
                    return same
        raise RuntimeError("could not allocate a unique sweep id")

    def get(self, sweep_id: str) -> dict:
        doc = self._sweeps.find_one(ours({"_id": sweep_id}))
        if doc is None:
            raise NotFound(
                f"no sweep with id {sweep_id!r}", fix="run 'llm-sim sweep list' to see the ids"
            )
        return doc

    def list(self, experiment_id: str | None = None) -> list[dict]:
        query = ours({"experiment_id": experiment_id} if experiment_id else {})
        return list(self._sweeps.find(query).sort("created_at", -1))

    # -- conversations of a sweep --------------------------------------------------------------

    def existing_keys(self, keys: list[str]) -> set[str]:
        table = rows_table(self._convs)
        if table is not None:
            return questions.stored_keys(table, keys)
        found: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            found.update(d["key"] for d in self._convs.find({"key": {"$in": chunk}}, {"key": 1}))
        return found

    def insert_conversations(self, docs: Iterable[dict]) -> int:
        """Insert the planned conversations whose key is new; return how many were added.

        `docs` may be a generator: it is consumed a batch at a time. On the embedded store all
        of them go into one transaction (a failure or a kill stores none); on a server, batches
        (a re-create stores what an interrupted one left out). A conversation whose random
        `_id` is taken gets another. See store/bulk_insert.py."""
        return insert_new(self._convs, docs, "key", lambda: new_id("conv"))

    def status_counts(self, sweep_id: str) -> dict[str, int]:
        table = rows_table(self._convs)
        if table is not None:
            return questions.sweep_counts(table, [sweep_id])[sweep_id]  # the kept counts
        rows = self._convs.aggregate(
            [
                {"$match": {"sweep_id": {"$eq": sweep_id}}},
                {"$group": {"_id": "$status", "n": {"$sum": 1}}},
            ]
        )
        return {row["_id"]: row["n"] for row in rows}

    def status_counts_of(self, sweep_ids: list[str]) -> dict[str, dict[str, int]]:
        """`status_counts` of several sweeps (on the embedded store, its kept counts)."""
        table = rows_table(self._convs)
        if table is not None:
            return questions.sweep_counts(table, sweep_ids)  # type: ignore[return-value]
        return {sweep_id: self.status_counts(sweep_id) for sweep_id in sweep_ids}

    def status_totals(self, sweep_id: str) -> dict[str, dict[str, int]]:
        """Per status: conversations, calls and tokens out, without loading whole documents.

        One count_documents per status (the (sweep_id, status) index answers it; one $group by
        status on a server, which nx-27017 answers from SQL), then the
        sums over the statuses that hold any (a waiting conversation has made no calls): a
        $match/$group on MongoDB; on the embedded store (the one with a claims lock) a
        projection of `counters` summed here, because its aggregation deep-copies every
        matched document first (4x slower at 10,000 conversations). On litemongo's table: the
        counts kept per sweep and status (conversation_rows.py)."""
        table = rows_table(self._convs)
        if table is not None:
            return kept_totals(questions.sweep_totals(table, sweep_id))
        if is_server_collection(self._convs):  # one pass; see counting.py
            by_status = count_by(self._convs, {"sweep_id": {"$eq": sweep_id}}, "status")
            counts = {status: by_status.get(status, 0) for status in CONVERSATION_STATUSES}
        else:
            counts = {
                status: self._convs.count_documents({"sweep_id": sweep_id, "status": status})
                for status in CONVERSATION_STATUSES
            }
        totals = {s: {"n": n, "calls": 0, "tokens_out": 0} for s, n in counts.items() if n}
        spent = [s for s in totals if s != "pending"]
        if not spent:
            return totals
        if self._lock_path is not None:
            query = {"sweep_id": sweep_id, "status": {"$in": spent}}
            for doc in self._convs.find(query, {"_id": 0, "status": 1, "counters": 1}):
                row, counters = totals[doc["status"]], doc.get("counters") or {}
                row["calls"] += int(counters.get("calls") or 0)
                row["tokens_out"] += int(counters.get("tokens_out") or 0)
            return totals
        sums = {
            "_id": None,
            "calls": {"$sum": "$counters.calls"},
            "tokens_out": {"$sum": "$counters.tokens_out"},
        }
        for status in spent:  # one indexed match per status: see the module's note on `$eq`
            match = {"sweep_id": {"$eq": sweep_id}, "status": {"$eq": status}}
            for row in self._convs.aggregate([{"$match": match}, {"$group": sums}]):
                totals[status]["calls"] = int(row.get("calls") or 0)
                totals[status]["tokens_out"] = int(row.get("tokens_out") or 0)
        return totals

    def failed_page(self, sweep_id: str, limit: int = 50) -> list[dict]:
        """The first `limit` failed conversations in sweep order: id, cell label, error."""
        table = rows_table(self._convs)
        if table is not None:
            return list(by_ids(table, questions.in_status(table, sweep_id, "failed", limit)))
        query = {"sweep_id": {"$eq": sweep_id}, "status": {"$eq": "failed"}}
        fields = {"_id": 1, "cell_label": 1, "error": 1}
        return list(self._convs.find(query, fields).sort("order", 1).limit(limit))

    def running_owners(self, sweep_id: str) -> list[str]:
        """The workers holding a lease on a running conversation of the sweep."""
        table = rows_table(self._convs)
        if table is not None:
            return questions.lease_owners(table, sweep_id)
        query = {"sweep_id": {"$eq": sweep_id}, "status": {"$eq": "running"}}
        owners = {d.get("lease_owner") for d in self._convs.find(query, {"lease_owner": 1})}
        return sorted(o for o in owners if o)

    def status_summary(self, sweep_id: str) -> dict:
        """Counts by status, calls and tokens, the workers and the first failures: a handful of
        queries whatever the sweep's size (no conversation documents are loaded but failed ones,
        50 at most, and running ones). What `llm-sim sweep status` and the report show."""
        return summary(
            sweep_id,
            self.get(sweep_id),
            self.status_totals(sweep_id),
            lambda limit: self.failed_page(sweep_id, limit),
            lambda: self.running_owners(sweep_id),
        )

    def conversations(self, sweep_id: str, status: str | None = None) -> list[dict]:
        table = rows_table(self._convs)
        if table is not None:
            ids = (
                questions.in_status(table, sweep_id, status)
                if status
                else questions.sweep_order(table, sweep_id)
            )
            return list(by_ids(table, ids))
        query = {"sweep_id": {"$eq": sweep_id}, **({"status": {"$eq": status}} if status else {})}
        return list(self._convs.find(query).sort("order", 1))

    def conversation_ids(self, sweep_id: str) -> list[str]:
        """The sweep's conversation ids in the order of `conversations`, without documents: an
        export of 100,000 holds ids and reads the documents a batch at a time. On the embedded
        store one pass over its table (a query there indexes every conversation and a sort
        copies each one it sees: see simulator/store/embedded.py): its rows' index."""
        table = rows_table(self._convs)
        if table is not None:
            return questions.sweep_order(table, sweep_id)
        query = {"sweep_id": {"$eq": sweep_id}}
        cursor = self._convs.find(query, {"_id": 1, "order": 1}).sort("order", 1)
        return [d["_id"] for d in cursor]

    def reset_failed(self, sweep_id: str) -> int:
        again = {"status": "pending", "error": None, "lease_owner": None, "lease_expires_ms": 0}
        table = rows_table(self._convs)
        if table is not None:  # by primary key, in one transaction

            def queue(_: int, doc: dict) -> bool:
                if doc.get("sweep_id") != sweep_id or doc.get("status") != "failed":
                    return False
                doc.update(again)
                return True

            failed = questions.in_status(table, sweep_id, "failed")
            return rewrite(self._convs, table, failed, queue)
        result = self._convs.update_many(
            {"sweep_id": {"$eq": sweep_id}, "status": {"$eq": "failed"}},
            {
                "$set": {
                    "status": "pending",
                    "error": None,
                    "lease_owner": None,
                    "lease_expires_ms": 0,
                }
            },
        )
        return result.modified_count
