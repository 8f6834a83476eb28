"""No log records per LLM call unless asked for; when asked for, they are there and redacted.

Before: every `llm-sim` session set the root logger to DEBUG, so the HTTP client libraries
wrote eleven records per call (ten httpcore traces to debug.log, one httpx line to both files),
each formatted and passed through the redaction filter: more CPU per call than the call.
Now libraries stay at WARNING, and the simulator's one per-call record (`simulator.calls`) is
dropped by its logger's level unless SIM_LOG_CALLS=1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simulator.logs
from simulator.testing import StubLLMServer

CONVERSATIONS = 3
CALLS = CONVERSATIONS * 5  # 4 messages and one summary each
PASSWORD = "hunter2-secret"


def log_lines(folder: Path) -> list[str]:
    return [
        line
        for path in sorted(folder.rglob("*.log"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


@pytest.fixture
def run_sweep(run_cli, tmp_path, prison_path, monkeypatch):
    """Run a small sweep through the real CLI against a stub whose URL carries a password;
    returns (lines in the run's session logs, redact() calls during the run)."""

    def run(env_extra: dict[str, str]) -> tuple[list[str], int]:
        with StubLLMServer(models=["stub"]) as stub:
            base = f"http://user:{PASSWORD}@127.0.0.1:{stub.port}/v1"
            env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice"}
            env |= {"OPENAI_BASE_URL": base, "SIM_LOG_DIR": str(tmp_path / "setup-logs")}
            imported = run_cli(["experiment", "import", str(prison_path), "--json"], env=env)
            created = run_cli(
                [
                    "sweep",
                    "create",
                    imported.json()["id"],
                    "--messages",
                    "4",
                    "--agents",
                    "Guard=1,Prisoner=1",
                    "--llm",
                    "openai:stub",
                    "--repetitions",
                    str(CONVERSATIONS),
                    "--yes",
                    "--json",
                ],
                env=env,
            )
            assert created.code == 0, created.err
            redactions = 0
            real_redact = simulator.logs.redact

            def counting(text: str) -> str:
                nonlocal redactions
                redactions += 1
                return real_redact(text)

            monkeypatch.setattr(simulator.logs, "redact", counting)
            run_env = {**env, "SIM_LOG_DIR": str(tmp_path / "run-logs"), **env_extra}
            result = run_cli(["sweep", "run", created.json()["sweep_id"], "--json"], env=run_env)
            monkeypatch.setattr(simulator.logs, "redact", real_redact)
            assert result.code == 0, result.err
            assert len(stub.chat_requests) == CALLS
        return log_lines(tmp_path / "run-logs"), redactions

    return run


def test_a_sweep_writes_no_record_per_call_by_default(run_sweep):
    lines, redactions = run_sweep({})
    assert lines, "the session logs exist"
    per_call = [
        line
        for line in lines
        if any(f" {name}" in line for name in ("simulator.calls:", "httpx", "httpcore"))
    ]
    assert per_call == []
    assert len(lines) < CALLS  # a handful of session records, none per call
    assert redactions < CALLS  # nothing per call was built, so nothing per call was redacted


def test_sim_log_calls_writes_one_redacted_record_per_call(run_sweep):
    lines, _ = run_sweep({"SIM_LOG_CALLS": "1"})
    calls = [line for line in lines if " DEBUG simulator.calls: " in line]
    assert len(calls) == CALLS
    assert all(" done in " in line for line in calls)
    assert all("user:***@127.0.0.1" in line for line in calls)
    assert any(" httpcore" in line for line in lines)  # the libraries' HTTP traces come too
    assert not [line for line in lines if PASSWORD in line]
