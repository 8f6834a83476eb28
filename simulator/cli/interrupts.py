"""Ctrl-C during a run stops it at once: the request in flight is cancelled (its HTTP stream
closed, so the server stops generating), its ledger row says so, and the conversation is
marked `interrupted`, resumable from its last stored message."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

from rich.console import Console

T = TypeVar("T")


def run_until_stopped(make: Callable[[asyncio.Event], Awaitable[T]], err: Console) -> T:
    """Run `make(stop)` on a fresh event loop with a SIGINT handler that sets `stop`."""

    async def main() -> T:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def on_sigint() -> None:
            if not stop.is_set():
                err.print("Stopping: cancelling the request in flight…")
            stop.set()
            if task is not None:
                task.cancel()

        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            return await make(stop)
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
