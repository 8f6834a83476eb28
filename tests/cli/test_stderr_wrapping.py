"""Standard error at a terminal wraps at words at its width (an 80-column terminal broke long
lines mid-word); sent to a pipe, each message stays one line, for grep and logs."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pexpect
from pty_session import REPO

SAMPLING = "Sampling for mock:demo: temperature 0.7, top_p 0.9, max_tokens 120 — the experiment's"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update({"SIM_USER": "alice", "SIM_DB": str(tmp_path / "db"), "NO_COLOR": "1"})
    return env


def test_a_terminal_of_80_columns_gets_lines_wrapped_at_words(tmp_path):
    args = [str(REPO / "main.py"), "demo", "--llm", "mock:demo", "--messages", "4", "--days", "2"]
    child = pexpect.spawn(
        sys.executable,
        args,
        env=_env(tmp_path),
        cwd=str(tmp_path),
        dimensions=(24, 80),
        encoding="utf-8",
        timeout=120,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    lines = [ANSI.sub("", line) for line in child.before.split("\r\n")]
    start = next(i for i, line in enumerate(lines) if line.startswith("Sampling for mock:demo"))
    assert all(len(line) <= 80 for line in lines[start : start + 2])
    assert " ".join(" ".join(lines[start : start + 2]).split()).startswith(SAMPLING)
    assert lines[start].endswith(("the", "the ")) and lines[start + 1].startswith("experiment's")


def test_a_pipe_gets_each_message_on_one_line(tmp_path):
    args = [sys.executable, str(REPO / "main.py"), "demo", "--llm", "mock:demo", "--days", "2"]
    done = subprocess.run(
        [*args, "--messages", "4"],
        env=_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert any(line.startswith(SAMPLING) for line in done.stderr.splitlines())
