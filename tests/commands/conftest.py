"""Run the real `llm-sim` entry point in a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def sim(tmp_path):
    """`sim("experiment", "list", user="bob", db=...)` -> Result; cwd is a temp dir (no .env)."""

    def run(
        *args: str,
        user: str | None = "alice",
        db: str | None = None,
        env: dict | None = None,
        input: str | None = None,
        timeout: float = 60,
    ) -> Result:
        full_env = {**os.environ, **(env or {})}
        if user:
            full_env["SIM_USER"] = user
        if db:
            full_env["SIM_DB"] = db
        full_env["PYTHONPATH"] = str(REPO)
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
