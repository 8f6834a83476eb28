"""Ctrl-C during a run: the first stops after the current turn, a second one stops at once."""

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
            if stop.is_set():
                err.print("Stopping now.")
                if task is not None:
                    task.cancel()
                return
            stop.set()
            err.print("Stopping after the current turn… (Ctrl-C again to stop at once)")

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
