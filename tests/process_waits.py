"""The CLI in a process of its own, and waiting on it by what it stores, never by the clock:
the kill, SIGTERM and outage tests start it against the loopback stub, poll the store until the
moment they need (a call in flight, a message stored) and fail at once, with the process's
output, if it ended before that moment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import in_process
import pytest

from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer

REPO = Path(__file__).resolve().parents[1]

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


def _settings(db: str, stub: StubLLMServer, db_name: str) -> dict[str, str]:
    return {
        "SIM_DB": db,
        "SIM_DB_NAME": db_name,
        "SIM_USER": "alice",
        "OPENAI_BASE_URL": stub.openai_base_url,
        "OPENAI_API_KEY": "sk-test",
        "SIM_PROGRESS_EVERY": "1000",
    }


def cli(
    db: str,
    stub: StubLLMServer,
    *args: str,
    db_name: str = "llm_simulator",
    python: list[str] | None = None,
) -> subprocess.Popen:
    """`llm-sim ARGS` in its own process on the stub; `python` replaces `python main.py` (a
    patched entry)."""
    env = {**os.environ, **_settings(db, stub, db_name), "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [*(python or [sys.executable, str(REPO / "main.py")]), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def cli_here(
    db: str, stub: StubLLMServer, *args: str, db_name: str = "llm_simulator"
) -> subprocess.CompletedProcess:
    """The same command run to its end in this process (tests/in_process.py), for the steps
    whose process is not the point: the resume after a kill, a status read beside a run."""
    return in_process.llm_sim(*args, env=_settings(db, stub, db_name))


def terminate(proc: subprocess.Popen, patience_s: float = PATIENCE_S) -> tuple[str, str]:
    """SIGTERM, then the output; fails if the process waited for a reply instead of stopping,
    or did not exit 143."""
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=patience_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("SIGTERM waited for the reply")
    assert proc.returncode == 143, err
    return out, err
