"""Run a sweep: claim conversations under a lease, run many at once, heartbeat, report progress.

Concurrency has two levels: `concurrency` conversations at a time in this worker, and one pool
per backend endpoint inside LLMAccess. A crashed or killed worker's conversations are taken over
when its lease expires (at once for dead processes on this machine) and continue from their
last stored message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from simulator.engine.budget import Budget
from simulator.engine.ports import Leases, TranscriptTaken
from simulator.errors import StoreUnavailable
from simulator.llm.access import LLMAccess

log = logging.getLogger(__name__)


@dataclass
class SweepProgress:
    sweep_id: str
    total: int
    done: int
    failed: int
    running_here: int
    remaining: int
    calls: int
    tokens: int
    elapsed_s: float

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        finished = self.done + self.failed - self._start_finished
        if finished <= 0 or self.elapsed_s <= 0:
            return None
        return self.remaining * self.elapsed_s / finished

    _start_finished: int = 0


class RunOne(Protocol):
    """Runs (or resumes) one claimed conversation of the sweep; returns its final status.

    Services supply it (services/sweep_runs.py): it knows the kinds of run (a chat, a grid)
    and the experiment snapshot, so the engine never imports services."""

    def __call__(
        self,
        doc: dict,
        stop: asyncio.Event,
        on_call: Callable[[dict], None],
        lease_owner: str,
    ) -> Awaitable[str]: ...


@dataclass
class SweepRunner:
    leases: Leases  # the sweep's runs as workers claim them (services/sweep_leases.py)
    sweep_id: str
    llms: LLMAccess
    run_one: RunOne | None = None  # required; services/sweep_runs.py's SweepRunner sets it
    concurrency: int = 8
    lease_ttl_s: float = 60.0
    heartbeat_s: float = 10.0
    poll_s: float = 1.0
    wait_for_others: bool = True  # keep polling while other workers hold leases
    on_progress: Callable[[SweepProgress], None] = lambda p: None
    progress_every_s: float = 1.0
    # Counts come from this worker's own events; the store is counted at the start, at the end,
    # and at most every `recount_every_s` (to see other workers' progress), and never more
    # often than 100x what one count costs: a count scans the whole sweep.
    recount_every_s: float = 30.0
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    worker: str = ""  # this worker's name on its leases; a new one when not given
    budget: Budget | None = None  # caps on the sweep's spend, checked before each claim

    def __post_init__(self) -> None:
        if self.run_one is None:
            raise TypeError("SweepRunner needs run_one (services.sweep_runs.SweepRunner sets it)")
        self.worker = self.worker or self.leases.worker_name()
        self._active: dict[str, asyncio.Task] = {}
        self._candidates: list[str] = []
        self._counts: dict[str, int] | None = None
        self._last_recount = 0.0
        self._recount_interval = self.recount_every_s
        self.recounts = 0  # how often the store was counted (for tests and benchmarks)
        self._finished_since_recount = {"done": 0, "failed": 0}
        self._calls = 0
        self._tokens = 0
        self._started = time.monotonic()
        self._start_finished = 0
        self._last_progress = 0.0
        self.outage: StoreUnavailable | None = None  # the store stopped taking writes

    async def run(self) -> SweepProgress:
        """Run until nothing is left to claim (or `stop`); StoreUnavailable when the store
        stops taking writes, after every conversation here has stopped resumable."""
        try:
            return await self._run()
        except Exception as exc:
            outage = self.leases.outage(exc)
            if outage is None:
                raise
            if outage is exc:
                raise
            raise outage from exc

    async def _run(self) -> SweepProgress:
        self.leases.expire_dead(self.sweep_id)
        counts = self._recount(time.monotonic())
        self._start_finished = counts.get("done", 0) + counts.get("failed", 0)
        heart = asyncio.create_task(self._heartbeat())
        try:
            while self.outage is None:
                if not self.stop.is_set():
                    self._fill()
                if not self._active:
                    if self.stop.is_set() or not self._others_working():
                        break
                    await asyncio.sleep(self.poll_s)
                    continue
                await asyncio.wait(
                    list(self._active.values()),
                    timeout=self.poll_s,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                self._reap()
                self._report()
        finally:
            heart.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heart
            why = f"stopped: {self.outage.what}" if self.outage is not None else None
            for task in self._active.values():
                task.cancel(why)
            if self._active:
                await asyncio.gather(*self._active.values(), return_exceptions=True)
        if self.outage is not None:
            raise self.outage
        return self._report(force=True)

    def _fill(self) -> None:
        """Claim until `concurrency` conversations run here, from a batch of candidates."""
        ttl_ms = int(self.lease_ttl_s * 1000)
        while len(self._active) < self.concurrency:
            if self.budget is not None and self.budget.exhausted():
                self.stop.set()  # a cap reached: no new run; those running stop resumable
                return
            if not self._candidates:
                self._candidates = self.leases.claimable(self.sweep_id)
                if not self._candidates:
                    return
            doc = self.leases.claim(self._candidates.pop(0), self.worker, ttl_ms)
            if doc is not None:
                self._active[doc["_id"]] = asyncio.create_task(self._run_one(doc), name=doc["_id"])

    async def _run_one(self, doc: dict) -> str:
        conversation_id = doc["_id"]
        try:
            assert self.run_one is not None
            return await self.run_one(doc, self.stop, self._count_call, self.worker)
        except TranscriptTaken as exc:
            log.warning("lease lost: %s", exc)
            return "taken"
        except Exception as exc:  # an engine bug must not stop the sweep: record and go on
            outage = self.leases.outage(exc)
            if outage is not None:  # but a store that takes no writes stops it, resumable
                self._stop_for(outage)
                return "stopped"
            log.exception("conversation %s crashed", conversation_id)
            self._write(self.leases.fail, conversation_id, f"internal error: {exc!r}", self.worker)
            return "failed"
        finally:
            self._write(self.leases.release, conversation_id, self.worker)

    def _write(self, write: Callable[..., object], *args: object) -> None:
        """A status or lease write, skipped once the server is known gone; an outage it
        meets stops the sweep (the lease then expires: at once for a dead local process)."""
        if self.leases.unreachable is not None:
            return
        try:
            write(*args)
        except Exception as exc:
            outage = self.leases.outage(exc)
            if outage is None:
                raise
            self._stop_for(outage)

    def _stop_for(self, outage: StoreUnavailable) -> None:
        """Stop claiming and cancel what runs here: each conversation stops resumable."""
        if self.outage is None:
            log.warning("sweep %s stops: %s", self.sweep_id, outage.what)
            self.outage = outage
        self.stop.set()

    def _count_call(self, call: dict) -> None:
        self._calls += 1
        self._tokens += call.get("tokens_out") or 0

    def _reap(self) -> None:
        for conversation_id, task in list(self._active.items()):
            if task.done():
                del self._active[conversation_id]
                result = None if task.cancelled() else task.result()
                if result in self._finished_since_recount:
                    self._finished_since_recount[result] += 1

    def _others_working(self) -> bool:
        if not self.wait_for_others:
            return False
        counts = self.leases.status_counts(self.sweep_id)
        return counts.get("running", 0) > 0

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            for conversation_id, task in list(self._active.items()):
                try:
                    ok = self.leases.heartbeat(
                        conversation_id, self.worker, int(self.lease_ttl_s * 1000)
                    )
                except Exception as exc:
                    outage = self.leases.outage(exc)
                    if outage is None:
                        raise
                    self._stop_for(outage)
                    return
                if not ok and not task.done():
                    log.warning(
                        "lease on %s lost; stopping that conversation here", conversation_id
                    )
                    task.cancel()

    def _recount(self, moment: float) -> dict[str, int]:
        """Count the sweep in the store; the next count waits at least 100x this one's cost."""
        began = time.perf_counter()
        self._counts = self.leases.status_counts(self.sweep_id)
        cost = time.perf_counter() - began
        self.recounts += 1
        self._last_recount = moment
        self._recount_interval = max(self.recount_every_s, 100 * cost)
        self._finished_since_recount = {"done": 0, "failed": 0}
        return self._counts

    def _report(self, force: bool = False) -> SweepProgress:
        """Progress every `progress_every_s`, from the last count plus what finished here since.

        Counting scans every conversation of the sweep (232 ms every 5 s at a few thousand
        conversations on the embedded store), so ticks only add this worker's own outcomes.
        """
        moment = time.monotonic()
        if not force and moment - self._last_progress < self.progress_every_s:
            return None  # type: ignore[return-value]
        self._last_progress = moment
        if force or self._counts is None or moment - self._last_recount >= self._recount_interval:
            self._recount(moment)
        counts = self._counts
        assert counts is not None
        total = sum(counts.values())
        done = counts.get("done", 0) + self._finished_since_recount["done"]
        failed = counts.get("failed", 0) + self._finished_since_recount["failed"]
        progress = SweepProgress(
            self.sweep_id,
            total,
            done,
            failed,
            len(self._active),
            max(total - done - failed, 0),
            self._calls,
            self._tokens,
            moment - self._started,
            self._start_finished,
        )
        self.on_progress(progress)
        return progress
