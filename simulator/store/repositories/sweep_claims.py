"""The claims that let several workers share a sweep: leases with expiry and heartbeat.

Lease times are epoch milliseconds (ints): every flavour stores and compares them alike.
On the embedded store a file lock serialises claims between processes, because its
find_one_and_update is atomic only within one process, and candidates come from its rows'
(sweep, status, order) index. Queries say `{"$eq": value}` (see sweeps.py).
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

from simulator.domain.clock import epoch_ms
from simulator.domain.ids import new_id
from simulator.store import conversation_questions as questions
from simulator.store.conversation_rows import rows_table
from simulator.store.embedded import by_ids, sort_key
from simulator.store.embedded_writes import set_fields_one, update_by_id

CLAIMABLE = ("pending", "interrupted")
HOST = socket.gethostname()


def worker_identity() -> str:
    return f"{HOST}:{os.getpid()}:{new_id('w')[2:]}"


class SweepClaims:
    """The claim methods of SweepsRepository, over its conversations (`_convs`) and, on the
    embedded store, its cross-process lock file (`_lock_path`)."""

    _convs: Any
    _lock_path: Path | None

    @contextlib.contextmanager
    def _claim_lock(self) -> Iterator[None]:
        if self._lock_path is None:
            yield
            return
        with FileLock(str(self._lock_path), timeout=60):
            yield

    def claimable_ids(self, sweep_id: str, limit: int = 256) -> list[str]:
        """Candidates to claim, in sweep order: waiting ones, then expired leases.

        Fetched in batches so that each claim is a lookup by `_id`. The embedded store reads
        them from its rows' (sweep, status, order) index (conversation_rows.py): its query
        index holds every conversation and is rebuilt whenever another process writes.
        """
        moment = epoch_ms()
        table = rows_table(self._convs)
        if table is not None:
            ids = questions.waiting(table, sweep_id, CLAIMABLE, limit)
            if len(ids) < limit:
                ids += questions.expired(table, sweep_id, moment, limit - len(ids))
            return ids
        waiting = []  # each claimable status on its own: see the module's note on `$eq`
        for status in CLAIMABLE:
            query = {"sweep_id": {"$eq": sweep_id}, "status": {"$eq": status}}
            cursor = self._convs.find(query, {"_id": 1, "order": 1}).sort("order", 1).limit(limit)
            waiting.extend(cursor)
        waiting.sort(key=lambda d: sort_key(d.get("order")))
        ids = [d["_id"] for d in waiting[:limit]]
        if len(ids) < limit:
            expired = {
                "sweep_id": {"$eq": sweep_id},
                "status": {"$eq": "running"},
                "lease_expires_ms": {"$lt": moment},
            }
            ids += [d["_id"] for d in self._convs.find(expired, {"_id": 1}).limit(limit - len(ids))]
        return ids

    def claim(self, conversation_id: str, worker: str, ttl_ms: int) -> dict | None:
        """Take one conversation if it is still waiting or its lease has expired (atomic)."""
        from pymongo import ReturnDocument

        moment = epoch_ms()
        query = {
            "_id": conversation_id,
            "$or": [
                {"status": {"$in": list(CLAIMABLE)}},
                {"status": "running", "lease_expires_ms": {"$lt": moment}},
            ],
        }
        fields = {
            "status": "running",
            "lease_owner": worker,
            "lease_expires_ms": moment + ttl_ms,
            "last_worker": worker,
        }
        update = {"$set": fields, "$inc": {"claims": 1}}
        table = rows_table(self._convs)
        with self._claim_lock():
            if table is not None:  # by primary key, in one transaction (see claimable_ids)

                def take(doc: dict) -> bool:
                    status = doc.get("status")
                    expired = status == "running" and _before(doc.get("lease_expires_ms"), moment)
                    if status not in CLAIMABLE and not expired:
                        return False
                    doc.update(fields, claims=_whole(doc.get("claims")) + 1)
                    return True

                return update_by_id(self._convs, table, conversation_id, take)
            return self._convs.find_one_and_update(
                query, update, return_document=ReturnDocument.AFTER
            )

    def claim_next(self, sweep_id: str, worker: str, ttl_ms: int) -> dict | None:
        """Take the next claimable conversation of the sweep (one query per candidate batch)."""
        for conversation_id in self.claimable_ids(sweep_id):
            doc = self.claim(conversation_id, worker, ttl_ms)
            if doc is not None:
                return doc
        return None

    def heartbeat(self, conversation_id: str, worker: str, ttl_ms: int) -> bool:
        """Extend a lease; False means another worker has taken the conversation over."""
        table = rows_table(self._convs)
        if table is not None:

            def extend(doc: dict) -> bool:
                if doc.get("lease_owner") != worker:
                    return False
                doc["lease_expires_ms"] = epoch_ms() + ttl_ms
                return True

            return update_by_id(self._convs, table, conversation_id, extend) is not None
        result = self._convs.update_one(
            {"_id": conversation_id, "lease_owner": worker},
            {"$set": {"lease_expires_ms": epoch_ms() + ttl_ms}},
        )
        return result.matched_count == 1

    def release(self, conversation_id: str, worker: str) -> None:
        query = {"_id": conversation_id, "lease_owner": worker}
        set_fields_one(self._convs, query, {"lease_owner": None, "lease_expires_ms": 0})

    def expire_dead_local_leases(self, sweep_id: str) -> int:
        """Leases held by processes of this machine that no longer exist expire at once."""
        expired = 0
        table = rows_table(self._convs)
        running = (
            by_ids(table, questions.in_status(table, sweep_id, "running"))
            if table is not None
            else self._convs.find(
                {"sweep_id": {"$eq": sweep_id}, "status": {"$eq": "running"}}, {"lease_owner": 1}
            )
        )
        for doc in running:
            owner = doc.get("lease_owner") or ""
            host, _, rest = owner.partition(":")
            pid = rest.split(":", 1)[0]
            if host == HOST and pid.isdigit() and not _alive(int(pid)):
                query = {"_id": doc["_id"], "lease_owner": owner}
                set_fields_one(self._convs, query, {"lease_expires_ms": 0})
                expired += 1
        return expired


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _before(value: Any, moment: int) -> bool:
    """MongoDB's `{"$lt": moment}` on a stored lease time (a missing one never matches)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value < moment


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
