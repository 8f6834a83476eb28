"""A cap on spend, as the engine meets it: checked before each call leaves and before each
sweep claim; once reached, no new call or run starts and what is in flight finishes.

The command that runs (services/cli) makes one `Budget` and installs it for its event loop
with `using(budget)`; every call ledger (engine/call_ledger.py) asks `current()` before its
request is sent, so every world and the memory stream's calls are covered without each one
passing it on. A sweep's budget reads the spend of the whole sweep from the store (every
worker's), so a cap holds across workers on one database.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from simulator.domain.budget import Caps


class CapReached(Exception):
    """A spend cap was reached before this call left: the run stops, resumable."""


@dataclass
class Budget:
    """Caps and where the spend they apply to is read: `spent(local)` gets the spend of the run
    making the call (a single run's cap is its own) and returns the spend to compare."""

    caps: Caps
    spent: Callable[[dict | None], dict] = lambda local: local or {}
    stop: asyncio.Event | None = None  # set when a cap is reached: a sweep claims no more
    reached: str | None = field(default=None)  # which cap, with what was spent

    def exhausted(self, local: dict | None = None) -> bool:
        """Whether a cap is reached (read now); the first time, `stop` is set."""
        if self.reached is None:
            why = self.caps.reached(self.spent(local))
            if why is not None:
                self.reached = why
                if self.stop is not None:
                    self.stop.set()
        return self.reached is not None

    def check(self, local: dict | None = None) -> None:
        """Before a call leaves: CapReached once a cap is reached."""
        if self.exhausted(local):
            raise CapReached(f"stopped: {self.reached}")


_current: ContextVar[Budget | None] = ContextVar("budget", default=None)


def current() -> Budget | None:
    """The budget of the command running in this context, None when it has no cap."""
    return _current.get()


@contextlib.contextmanager
def using(budget: Budget | None) -> Iterator[None]:
    """Install `budget` for this context and the tasks started from it."""
    token = _current.set(budget)
    try:
        yield
    finally:
        _current.reset(token)


def stop_reason(default: str) -> str:
    """Why a run stopped between steps: the cap reached, else `default` (the user's stop)."""
    budget = current()
    if budget is not None and budget.reached is not None:
        return f"stopped: {budget.reached}"
    return default
