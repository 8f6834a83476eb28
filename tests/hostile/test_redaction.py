"""Log redaction is one linear pass: a long argument no longer stalls every command.

Before: the URI pattern began with the scheme (`[a-z][a-z0-9+.-]*://`) and re-scanned each run
of letters from every one of its letters: 16k characters took seconds, 200k would take minutes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from simulator.logs import redact

from .conftest import within

SECRETS = ["hunter2", "s3cr3t@with@ats", "sk-abcdefghijklmnop", "hf_abcdefghijklmn", "tok.en-123"]


def _long_text(size: int) -> str:
    """Secrets around one long run of letters (the shape that was quadratic) and many short ones."""
    secrets = (
        "mongodb://alice:hunter2@db.example.com:27017/x "
        "see https://bob:s3cr3t@with@ats@host/path "
        "key sk-abcdefghijklmnop token hf_abcdefghijklmn "
        "Authorization: Bearer tok.en-123 "
    )
    short_runs = ("word:// " * 1000) + secrets
    return secrets + "a" * (size - 2 * len(short_runs)) + short_runs + short_runs


def test_redacting_200k_characters_removes_every_secret():
    text = _long_text(200_000)
    assert all(secret in text for secret in SECRETS)
    cleaned = redact(text)
    for secret in SECRETS:
        assert secret not in cleaned
    assert "mongodb://alice:***@db.example.com:27017/x" in cleaned
    assert "Bearer ***" in cleaned


def test_redacting_200k_characters_finishes():
    """In a child process with a generous 60 s limit: a regex holds the GIL, so a thread's
    timeout could not fire while it ran (the old pattern needed minutes here)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from hostile.test_redaction import _long_text; from simulator.logs import redact; "
        "print(len(redact(_long_text(200_000))))"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(Path(__file__).parents[1])],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path(__file__).parents[1],  # not the repository root: the installed package
        )
    except subprocess.TimeoutExpired:
        pytest.fail("redacting 200k characters took more than 60 s")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mongodb://u:pw@h:1/db", "mongodb://u:***@h:1/db"),
        ("mongodb+srv://u:p%40ss@c.net/?x=1", "mongodb+srv://u:***@c.net/?x=1"),
        ("mongodb://:pw@h", "mongodb://:***@h"),
        ("redis://u:p@ss@h/0", "redis://u:***@h/0"),
        ("http://localhost:8080/v1", "http://localhost:8080/v1"),
        ("mongodb://USER:PASSWORD@HOST:PORT", "mongodb://USER:PASSWORD@HOST:PORT"),
        ("a" * 20_000, "a" * 20_000),
    ],
)
def test_redaction_cases(text, expected):
    assert within(60, lambda: redact(text)) == expected


def test_secret_variable_values_are_removed(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", "correct horse")
    assert redact("login with correct horse now") == "login with *** now"


def test_a_long_argument_is_logged_redacted_without_stalling(cli, tmp_path, isolated_settings):
    """The argument line is redacted for the session log before the command runs."""
    argument = "x" * 16_000 + " mongodb://u:hunter2@h/"
    result = within(60, lambda: cli("experiment", "show", argument, db=str(tmp_path / "s")))
    assert result.code == 2, result.describe()
    logs = list((isolated_settings / "logs").rglob("info.log"))
    assert logs and all("hunter2" not in log.read_text() for log in logs)
