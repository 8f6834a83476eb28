"""Drive the real `python main.py` through a pseudo-terminal, as a person at a keyboard would."""

from __future__ import annotations

import json
import os
from pathlib import Path

import in_process
import pytest
from pty_session import REPO, Pty


@pytest.fixture
def pty_env(tmp_path: Path) -> dict[str, str]:
    """Isolated settings, a plain terminal, no CPR queries (nobody answers them in a pty)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SIM_", "DB_", "MONGODB", "OPENAI", "OLLAMA"))
    }
    env.update(
        SIM_DATA_DIR=str(tmp_path / "data"),
        SIM_CONFIG_DIR=str(tmp_path / "config"),
        SIM_LOG_DIR=str(tmp_path / "logs"),
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",
        PYTHONPATH=str(REPO),
        COLUMNS="220",
        LINES="50",
    )
    return env


@pytest.fixture
def spawn(pty_env: dict[str, str], tmp_path: Path):
    sessions: list[Pty] = []

    def start(**extra: str) -> Pty:
        session = Pty({**pty_env, **extra}, tmp_path)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        if session.child.isalive():
            session.child.terminate(force=True)


@pytest.fixture
def sim(pty_env: dict[str, str], tmp_path: Path):
    """Run a non-interactive `llm-sim` command against the same store (in this process, through
    the real `main()`); returns stdout."""

    def run(*args: str, user: str = "alice") -> str:
        # the pty's environment as it is now (a test may add to it), laid over this process's
        env = {k: v for k, v in pty_env.items() if os.environ.get(k) != v}
        proc = in_process.llm_sim(*args, env={**env, "SIM_USER": user}, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def run_json(*args: str, user: str = "alice"):
        return json.loads(run(*args, "--json", user=user))

    run.json = run_json  # type: ignore[attr-defined]
    return run
