"""Waiting on a CLI process by what it stores, never by the clock: the kill, SIGTERM and
outage tests poll the store until the moment they need (a call in flight, a message stored)
and fail at once, with the process's output, if it ended before that moment."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from simulator.store.database import open_database
from simulator.store.store import open_store

T = TypeVar("T")
PATIENCE_S = 120.0  # a limit for a broken test, never a timing the test relies on


def wait_until(proc: subprocess.Popen, check: Callable[[], T], moment: str) -> T:
    """`check()`'s first truthy answer; fails if `proc` ends first or the patience runs out."""
    deadline = time.monotonic() + PATIENCE_S
    while True:
        found = check()
        if found:
            return found
        if proc.poll() is not None:
            pytest.fail(f"the command ended before {moment}: {proc.communicate()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"never saw {moment}")
        time.sleep(0.05)


def stored(db: str, collection: str, query: dict, db_name: str | None = None) -> list[dict]:
    """The documents of `collection` matching `query`, read through a store of its own."""
    store = open_store(open_database(db, db_name or "llm_simulator"))
    try:
        return list(store.db[collection].find(query))
    finally:
        store.close()
