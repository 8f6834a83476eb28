"""A sweep's spend, kept as counters on the sweep document (`spend`: calls, tokens in and out,
dollars, calls of unknown price, seconds) and raised with `$inc` as each call finishes, so
that `sweep status` and a shared cap read one document rather than every call of the sweep.

On the embedded store several processes share one database file and an update is atomic only
within one process, so the increments go under a file lock of their own (not the claims lock:
a call finishing never waits for a claim).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

from simulator.domain.spend import SPEND_FIELDS, spend_of


class SweepSpend:
    """The spend counters of sweeps, on the sweeps collection."""

    def __init__(self, db: Any, lock_path: Path | None):
        self._sweeps = db.sweeps
        self._lock = None if lock_path is None else FileLock(str(lock_path) + ".spend", timeout=60)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self._lock is None:
            yield
            return
        with self._lock:
            yield

    def add(self, sweep_id: str, delta: dict) -> None:
        """Raise the sweep's counters by `delta` (one finished call, or a few)."""
        inc = {f"spend.{name}": delta[name] for name in SPEND_FIELDS if delta.get(name)}
        if not inc:
            return
        with self._locked():
            self._sweeps.update_one({"_id": sweep_id}, {"$inc": inc})

    def read(self, sweep_id: str) -> dict:
        """The sweep's spend so far, every field present (zeros before its first call)."""
        doc = self._sweeps.find_one({"_id": sweep_id}, {"spend": 1})
        return spend_of((doc or {}).get("spend"))

    def set_caps(self, sweep_id: str, caps: dict | None) -> None:
        """The caps a sweep file gave (`caps:`), kept on the sweep for every later run."""
        self._sweeps.update_one({"_id": sweep_id}, {"$set": {"caps": caps}})
