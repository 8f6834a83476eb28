"""Run a stored run in this process and, if asked, cancel it after its n-th model call, as
Ctrl-C does: the tests' way to cut a run at a chosen call and resume it (every world's service
`run(store, run_id, llms, on_call=...)` takes the same two hooks). An embedding request's
ledger row is not counted: how many a step sends depends on what the process had cached."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from simulator.domain.embedding_rows import is_embedding
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy

T = TypeVar("T")
Start = Callable[[LLMAccess, Callable[[dict], None]], Awaitable[T]]


def run_cancelling(start: Start[T], cancel_after: int | None = None) -> T | None:
    """`start(llms, on_call)` to the end through the real clients (retries without waiting);
    with `cancel_after`, cancelled once that many calls have finished, and None returned."""

    async def go() -> T | None:
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        finished = 0

        def on_call(call: dict) -> None:
            nonlocal finished
            if is_embedding(call):
                return
            finished += 1
            if finished == cancel_after:
                task.cancel()

        task = asyncio.ensure_future(start(llms, on_call))
        try:
            return await task
        except asyncio.CancelledError:
            return None
        finally:
            await llms.aclose()

    return asyncio.run(go())
