"""Run `llm-sim` as a user would: in-process through the real `main()` (fast), or in a subprocess.

`sim` calls `simulator.cli.main.main(argv)` inside click's CliRunner isolation (the root conftest's
`run_cli`), so flags, `SIM_*` variables, `.env`, error rendering and exit statuses are the real
ones, without paying a Python start per call. `sim_process` runs `main.py` in a subprocess; keep
it for what only a separate process shows (exit statuses of the real interpreter, secrets in a
fresh process's logs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    """What a subprocess run left (the same fields as the root conftest's in-process CliResult)."""

    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


Sim = Callable[..., Result]


def _environment(user: str | None, db: str | None, env: dict | None) -> dict[str, str]:
    extra = dict(env or {})
    if user:
        extra["SIM_USER"] = user
    if db:
        extra["SIM_DB"] = db
    return extra


@pytest.fixture
def sim(tmp_path, monkeypatch, run_cli) -> Sim:
    """`sim("experiment", "list", user="bob", db=...)` -> Result; cwd is a temp dir (no .env)."""
    monkeypatch.chdir(tmp_path)

    def run(
        *args: str,
        user: str | None = "alice",
        db: str | None = None,
        env: dict | None = None,
        input: str | None = None,
    ) -> Result:
        return run_cli(list(args), env=_environment(user, db, env), input=input)

    return run


@pytest.fixture
def sim_process(tmp_path) -> Sim:
    """The same call in a fresh interpreter running `main.py`, as a user's shell would."""

    def run(
        *args: str,
        user: str | None = "alice",
        db: str | None = None,
        env: dict | None = None,
        input: str | None = None,
        timeout: float = 600,
    ) -> Result:
        full_env = {**os.environ, **_environment(user, db, env), "PYTHONPATH": str(REPO)}
        proc = subprocess.run(
            [sys.executable, str(REPO / "main.py"), *args],
            cwd=tmp_path,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run
