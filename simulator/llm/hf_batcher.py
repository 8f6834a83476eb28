"""Dynamic batching for in-process models: many agents' concurrent calls become few `generate` runs.

A GPU answers 32 prompts in about the time it answers one, so the `hf` backend does not call the
model per request. Each `submit` puts a request on a queue; one task per event loop waits a few
milliseconds for companions, groups what it collected by generation settings (one `generate` call
can only apply one set), and hands each group to a blocking `run_batch` function in a worker
thread, so the event loop keeps serving the conversations meanwhile. Requests that arrive while a
batch runs wait in the queue and form the next batch. This module knows nothing about torch: the
backend supplies `run_batch`, which keeps batching testable on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_BATCH_WAIT_MS = 5.0
DEFAULT_MAX_BATCH_SIZE = 32


@dataclass
class BatchRequest:
    """One caller's prompt. `group_key` must be equal for requests that may share a `generate`."""

    prompt_ids: list[int]
    group_key: Hashable
    options: Any = None  # whatever run_batch needs besides the prompt (e.g. GenerationParams)
    future: asyncio.Future = field(default=None, repr=False)  # type: ignore[assignment]


RunBatch = Callable[[Sequence[BatchRequest]], list[Any]]


class DynamicBatcher:
    """Collects concurrent requests and runs them in groups through `run_batch`.

    `run_batch` receives requests sharing one `group_key` and returns one result per request, in
    order; it runs in a worker thread, one batch at a time (the model is not shared between
    threads). If it raises, every request of that batch gets the exception.
    """

    def __init__(
        self,
        run_batch: RunBatch,
        *,
        batch_wait_ms: float = DEFAULT_BATCH_WAIT_MS,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
    ) -> None:
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be at least 1")
        if batch_wait_ms < 0:
            raise ValueError("batch_wait_ms must not be negative")
        self._run_batch = run_batch
        self.batch_wait_s = batch_wait_ms / 1000.0
        self.max_batch_size = max_batch_size
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[BatchRequest] | None = None
        self._task: asyncio.Task | None = None
        # Counters for tests and benchmarks: how much batching actually happened.
        self.generate_calls = 0
        self.requests_served = 0
        self.largest_batch = 0
        # How many `run_batch` calls had each size ({size: count}): the batch sizes reached,
        # e.g. to check that one grid stage's calls really went out together.
        self.batch_sizes: Counter[int] = Counter()

    async def submit(self, request: BatchRequest) -> Any:
        """Queue one request and wait for its result (or its batch's exception)."""
        self._ensure_worker()
        assert self._queue is not None and self._loop is not None
        request.future = self._loop.create_future()
        await self._queue.put(request)
        return await request.future

    def _ensure_worker(self) -> None:
        """Start the collecting task on the running loop; a new loop (e.g. a new test) gets a new
        queue, because asyncio queues and tasks belong to the loop that made them."""
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._task is not None and not self._task.done():
            return
        self._loop = loop
        self._queue = asyncio.Queue()
        self._task = loop.create_task(self._worker(self._queue), name="hf-dynamic-batcher")

    async def _worker(self, queue: asyncio.Queue[BatchRequest]) -> None:
        while True:
            pending = await self._collect(queue)
            for group in _group(pending, self.max_batch_size):
                await self._run_group(group)

    async def _collect(self, queue: asyncio.Queue[BatchRequest]) -> list[BatchRequest]:
        """Block for the first request, then gather more for up to `batch_wait_s`."""
        pending = [await queue.get()]
        deadline = asyncio.get_running_loop().time() + self.batch_wait_s
        while len(pending) < self.max_batch_size:
            try:
                pending.append(queue.get_nowait())
                continue
            except asyncio.QueueEmpty:
                pass
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                break
            try:
                pending.append(await asyncio.wait_for(queue.get(), remaining))
            except TimeoutError:
                break
        return [r for r in pending if not r.future.done()]  # callers may have been cancelled

    async def _run_group(self, group: list[BatchRequest]) -> None:
        self.generate_calls += 1
        self.largest_batch = max(self.largest_batch, len(group))
        self.batch_sizes[len(group)] += 1
        try:
            results = await asyncio.to_thread(self._run_batch, group)
            if len(results) != len(group):
                raise RuntimeError(f"run_batch returned {len(results)} results for {len(group)}")
        except asyncio.CancelledError:
            _fail(group, RuntimeError("backend closed while the batch was running"))
            raise
        except Exception as exc:  # one failed batch fails its callers, not the batcher
            _fail(group, exc)
            return
        self.requests_served += len(group)
        for request, result in zip(group, results, strict=True):
            if not request.future.done():
                request.future.set_result(result)

    async def aclose(self) -> None:
        """Stop the collecting task and fail requests still queued."""
        task, queue, loop = self._task, self._queue, self._loop
        self._task = self._queue = self._loop = None
        if task is None or loop is not asyncio.get_running_loop():
            return  # a task of another (finished) loop cannot be awaited; it died with its loop
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        while queue is not None and not queue.empty():
            _fail([queue.get_nowait()], RuntimeError("backend closed"))


def _fail(requests: Sequence[BatchRequest], exc: BaseException) -> None:
    for request in requests:
        if not request.future.done():
            request.future.set_exception(exc)


def _group(requests: list[BatchRequest], max_size: int) -> list[list[BatchRequest]]:
    """Split by `group_key` in arrival order, then cut each group to `max_size`."""
    groups: dict[Hashable, list[BatchRequest]] = {}
    for request in requests:
        groups.setdefault(request.group_key, []).append(request)
    out: list[list[BatchRequest]] = []
    for members in groups.values():
        out.extend(members[i : i + max_size] for i in range(0, len(members), max_size))
    return out
