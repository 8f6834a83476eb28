"""Fixtures for hostile input: the real CLI in-process, a store with the prison experiment."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from .harness import PRISON, Outcome, fingerprint, run_cli


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Callable[..., Outcome]:
    """`cli("experiment", "list", db=...)`: `llm-sim` in this process, cwd a temp dir."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("SIM_USER", "alice")
    monkeypatch.setenv("SIM_DB_TIMEOUT_MS", "2000")

    def run(*args: str, db: str | None = None, env: dict | None = None) -> Outcome:
        prefix = ["--db", db] if db is not None else []
        return run_cli([*prefix, *args], env=env)

    return run


@pytest.fixture
def db(tmp_path) -> str:
    return str(tmp_path / "store")


@pytest.fixture
def experiment_id(cli, db) -> str:
    made = cli("experiment", "create", str(PRISON), "--json", db=db)
    assert made.code == 0, made.describe()
    return json.loads(made.out)["id"]


def refused(outcome: Outcome, *fragments: str) -> None:
    """Exit 2, one readable paragraph, no traceback, and every fragment in the message."""
    assert outcome.clean, outcome.describe()
    assert outcome.code == 2, outcome.describe()
    assert outcome.err.startswith("Error: "), outcome.describe()
    for fragment in fragments:
        assert fragment in outcome.err, outcome.describe()


def unchanged(db: str, before: str | None) -> None:
    assert fingerprint(db) == before, "the store changed after a refusal"


def within(seconds: float, call: Callable[[], object]) -> object:
    """Run `call` in a daemon thread and fail if it has not returned after `seconds` (a hang)."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds:g} s (the input hangs the tool)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)
