"""Group commit: the hot-path writes of many concurrent conversations, sent as one batch each.

A sweep's conversations each write four documents per call (the prompt, the ledger row before the
request leaves, its outcome, the message). Sent one by one, that is four round trips per call, and
on a server every round trip costs it more than the document does (nx-27017: 0.57 ms of server
CPU per `insert_one`, 0.19 ms per document of an `insert_many` of 32). So writes queued while the
event loop serves other conversations go out together a moment later: one `insert_many` per
collection, one `bulk_write` of the updates.

Nothing about durability changes: every writer awaits its write, so a conversation never moves on
(never sends the request, never starts the next turn) before what it wrote is stored, exactly as
with one write at a time. A crash loses only writes that nobody has been told are stored. Within
a flush the groups go out in a fixed order (prompts, new ledger rows, ledger outcomes, messages),
the order in which one conversation writes them, so a crash between two groups leaves each
conversation in a state one-at-a-time writing could also have left.

On a server the batches go out from one writer thread, back to back while writes keep coming,
so the event loop serves other conversations while the server answers (pymongo is thread-safe);
on the embedded store, which is not, they go out on the event loop's thread. One batch at a time
either way, in queue order. A synchronous write of the same conversation (its status) calls
`flush_now` first, so it can never overtake a queued one. On the embedded store a group is one
SQLite transaction (embedded_writes.py) rather than one per document through mongomock.

Measured on the 64 x 20 sweep against nx-27017 (bench/sweep_cli.py --wire): 1.00 command per
call instead of 4.8, and the CLI's wall time 2.03x the bare client's before, about 1.2x after.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from simulator.store.counting import is_server_collection
from simulator.store.embedded_writes import DirectTable, direct_table

DUPLICATE_KEY = 11000
# at most one timed flush per 2 ms: long enough to gather a loop's worth of replies, short
# against any LLM call; a write after a quiet spell goes out at the end of the loop's turn
FLUSH_DELAY_S = 0.002

Kind = Literal["insert", "update"]

# the order one conversation writes in: a ledger row names its prompt, a message follows its call
ORDER: tuple[tuple[str, Kind], ...] = (
    ("prompts", "insert"),
    ("calls", "insert"),
    ("calls", "update"),
    ("messages", "insert"),
    ("grid_steps", "insert"),  # a grid step's rows follow its calls, as messages do
    ("network_rounds", "insert"),  # as grid steps
    ("summaries", "insert"),
    ("conversations", "update"),  # progress counters, the summary list
)
# any other world's rows (a registered world's ROWS_COLLECTION) go where grid steps go
_OTHER_INSERTS = ORDER.index(("network_rounds", "insert")) + 0.5


def _rank(key: tuple[str, Kind]) -> float:
    """Where a group of writes goes in a batch: its place in ORDER; another collection's
    inserts with the world rows', its updates last."""
    if key in ORDER:
        return ORDER.index(key)
    return _OTHER_INSERTS if key[1] == "insert" else len(ORDER)


@dataclass
class _Op:
    collection: str
    kind: Kind
    document: dict  # the document to insert, or the fields an update sets
    future: asyncio.Future
    query: dict | None = None  # updates: which document (by _id, maybe guarded by more)


@dataclass
class FlushStats:
    """What the batching achieved, for benchmarks: writes per round trip."""

    flushes: int = 0
    round_trips: int = 0
    writes: int = 0
    by_group: dict[str, int] = field(default_factory=dict)


class GroupCommit:
    """Batches the hot-path writes of one event loop; see the module docstring."""

    def __init__(
        self,
        db: Any,
        loop: asyncio.AbstractEventLoop,
        delay_s: float | None = None,
        threaded: bool | None = None,
    ) -> None:
        self._db = db
        self.loop = loop
        self._delay_s = FLUSH_DELAY_S if delay_s is None else delay_s
        self._pending: list[_Op] = []
        self._timer: asyncio.TimerHandle | None = None
        self._last_flush = float("-inf")  # loop time the last timed flush began
        self._draining: asyncio.Task | None = None
        # one batch at a time, in order, whichever thread writes it
        self._writing = threading.Lock()
        if threaded is None:  # pymongo is thread-safe; the embedded store is not
            threaded = is_server_collection(db["calls"])
        self._executor = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="sim-group-commit")
            if threaded
            else None
        )
        self.stats = FlushStats()
        self._tables: dict[str, DirectTable | None] = {}

    def insert(self, collection: str, document: dict) -> asyncio.Future[bool]:
        """Queue an insert; the future says True once stored, False when its `_id` was taken."""
        return self._queue(_Op(collection, "insert", document, self.loop.create_future()))

    def update(self, collection: str, query: dict, fields: dict) -> asyncio.Future[bool]:
        """Queue a `$set` of `fields` on the document `query` names; True once stored."""
        future = self.loop.create_future()
        return self._queue(_Op(collection, "update", fields, future, query))

    def is_queued(self, future: asyncio.Future) -> bool:
        """Whether `future`'s write waits in the queue (not yet taken into a batch)."""
        return any(op.future is future for op in self._pending)

    def flush_now(self) -> None:
        """Write everything queued, now, on this thread (before a synchronous write that must
        come after): waits for a batch the writer thread is writing, then writes the rest."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            batch, self._pending = self._pending, []
            _settle(batch, self._write_batch(batch))

    def abandon(self, reason: BaseException) -> None:
        """Fail what is queued without writing it (the server is gone: each try would wait
        out its timeout); the writers already heard the same failure or were cancelled."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, []
        if not self.loop.is_closed():  # else nobody is left to hear it
            _settle(batch, [reason] * len(batch))

    def close(self) -> None:
        """Write what is queued and stop the writer thread."""
        self.flush_now()
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    def _queue(self, op: _Op) -> asyncio.Future[bool]:
        self._pending.append(op)
        if self._timer is None and self._draining is None:
            self._arm()
        return op.future

    def _arm(self) -> None:
        """The next timed flush: `delay_s` after the last one began, or at the end of this turn
        of the loop when that is past (writes queued meanwhile go in the same batch)."""
        wait = self._last_flush + self._delay_s - self.loop.time()
        self._timer = self.loop.call_later(max(wait, 0.0), self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._last_flush = self.loop.time()
        if self._executor is None:
            self.flush_now()
        elif self._draining is None:
            self._draining = self.loop.create_task(self._drain())

    async def _drain(self) -> None:
        """Writer-thread flushes, back to back while writes keep arriving: the event loop
        serves other conversations while the server answers (a round trip per group)."""
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                outcomes = await self.loop.run_in_executor(self._executor, self._write_batch, batch)
                _settle(batch, outcomes)
        finally:
            self._draining = None
            if self._pending and self._timer is None:
                self._arm()

    def _write_batch(self, batch: list[_Op]) -> list[bool | BaseException]:
        """Write one batch, group by group in ORDER; each op's outcome, in the batch's order."""
        found: dict[tuple[str, Kind], list[int]] = {}
        for position, op in enumerate(batch):
            found.setdefault((op.collection, op.kind), []).append(position)
        groups = {key: found[key] for key in sorted(found, key=_rank)}
        outcomes: list[bool | BaseException] = [True] * len(batch)
        with self._writing:
            self.stats.flushes += 1
            failure: BaseException | None = None
            for (collection, kind), positions in groups.items():
                if not positions:
                    continue
                ops = [batch[i] for i in positions]
                if failure is not None:  # a later group would overtake what failed: fail it
                    results: list[bool | BaseException] = [failure] * len(ops)
                else:
                    try:
                        results = self._write(collection, kind, ops)
                    except Exception as exc:  # connection lost, server error: all hear it
                        failure = exc
                        results = [exc] * len(ops)
                for i, result in zip(positions, results, strict=True):
                    outcomes[i] = result
                self.stats.writes += len(ops)
                name = f"{collection} {kind}"
                self.stats.by_group[name] = self.stats.by_group.get(name, 0) + len(ops)
        return outcomes

    def _write(self, collection: str, kind: Kind, ops: list[_Op]) -> list[bool | BaseException]:
        from pymongo import UpdateOne

        target = self._db[collection]
        direct = self._direct_table(collection, target)
        if direct is not None and kind == "insert" and direct.can_insert():
            self.stats.round_trips += 1
            return list(direct.insert([op.document for op in ops]))
        if direct is not None and all(direct.can_update(op.query, op.document) for op in ops):
            self.stats.round_trips += 1
            return list(direct.update([(op.query, op.document) for op in ops]))  # type: ignore[misc]
        if kind == "insert":
            self.stats.round_trips += 1
            return _insert_many(target, [op.document for op in ops])
        if is_server_collection(target):
            self.stats.round_trips += 1
            requests = [UpdateOne(op.query, {"$set": op.document}) for op in ops]
            return _bulk_outcomes(lambda: target.bulk_write(requests, ordered=False), len(ops))
        # mongomock's own update path: filters beyond an `_id`, unique indexes to check
        outcomes: list[bool | BaseException] = []
        for op in ops:
            self.stats.round_trips += 1
            target.update_one(op.query, {"$set": op.document})
            outcomes.append(True)
        return outcomes

    def _direct_table(self, collection: str, target: Any) -> DirectTable | None:
        """The embedded store's table a group of `collection` may be written to directly
        (embedded_writes.py), looked up once; None on a server and on mongomock."""
        if collection not in self._tables:
            self._tables[collection] = None if self._executor else direct_table(target)
        return self._tables[collection]


def _insert_many(target: Any, documents: list[dict]) -> list[bool | BaseException]:
    return _bulk_outcomes(lambda: target.insert_many(documents, ordered=False), len(documents))


def _bulk_outcomes(write: Callable[[], Any], size: int) -> list[bool | BaseException]:
    """Per document: True stored, False its `_id` was already taken, else the error it got.

    With `ordered=False` every document is tried, and the server lists each one that failed."""
    from pymongo.errors import BulkWriteError

    outcomes: list[bool | BaseException] = [True] * size
    try:
        write()
    except BulkWriteError as exc:
        for error in exc.details.get("writeErrors", []):
            index = error["index"]
            if error.get("code") == DUPLICATE_KEY:
                outcomes[index] = False
            else:
                outcomes[index] = RuntimeError(f"store write failed: {error.get('errmsg')}")
    return outcomes


def _settle(ops: list[_Op], outcomes: list[bool | BaseException]) -> None:
    for op, outcome in zip(ops, outcomes, strict=True):
        if op.future.done():  # its writer was cancelled meanwhile; the write stands regardless
            continue
        if isinstance(outcome, BaseException):
            op.future.set_exception(outcome)
        else:
            op.future.set_result(outcome)
