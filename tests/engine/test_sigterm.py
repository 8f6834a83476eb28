"""SIGTERM (`docker stop`, systemd, a batch scheduler) stops a run as Ctrl-C does: the request
in flight cancelled and its ledger row closed, the run `interrupted`, one line saying how to
resume, exit status 143 after the cleanup; the resume then finishes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import in_process
import pytest
from process_waits import cli, cli_here, stored, terminate, wait_until

from simulator.cli.interrupts import Terminated, sigterm_ends_the_command
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.worlds.chat.services import runs as conv_service

REPO = Path(__file__).resolve().parents[2]
SLOW_S = 120.0  # far longer than any wait below: the stop must not wait for the reply
MESSAGES = 4
GRID = REPO / "prompts" / "experiments" / "takata_grid.yaml"


@pytest.fixture
def setup(tmp_path, prison_path):
    db = str(tmp_path / "store")
    store = open_store_uri(db)
    exp_id = exp_service.import_yaml(store, prison_path, "alice").id
    store.close()
    with StubLLMServer(models=["stub"]) as stub:
        yield db, exp_id, stub


def _parent(db: str, exp_id: str) -> str:
    """A finished conversation to fork and to replay."""
    store = open_store_uri(db)
    try:
        view = exp_service.get(store, exp_id, "alice")
        spec = conv_service.build_spec(
            view, agents="guard=1,prisoner=1", total_messages=MESSAGES, llm="openai:stub", seed=3
        )
        return run_service.create_run(store, view, spec, "alice")["_id"]
    finally:
        store.close()


def _finish(db: str, stub: StubLLMServer, conversation_id: str) -> None:
    done = cli_here(db, stub, "conversation", "resume", conversation_id)
    assert done.returncode == 0, done.stderr


def _started(db: str, exp_id: str, stub: StubLLMServer, command: str) -> subprocess.Popen:
    stub.latency_s = SLOW_S
    if command == "run":
        return cli(db, stub, "run", exp_id, "--agents", "guard=1,prisoner=1", "--messages",
                    str(MESSAGES), "--llm", "openai:stub")  # fmt: skip
    if command == "grid":
        store = open_store_uri(db)
        grid_id = exp_service.import_yaml(store, GRID, "alice").id
        store.close()
        return cli(db, stub, "run", grid_id, "--agents", "3", "--steps", "2", "--llm",
                    "openai:stub")  # fmt: skip
    parent = _parent(db, exp_id)
    if command == "resume":  # stored, never started: `conversation resume` runs it
        return cli(db, stub, "conversation", "resume", parent)
    stub.latency_s = 0.0
    _finish(db, stub, parent)
    stub.latency_s = SLOW_S
    if command == "fork":
        return cli(db, stub, "conversation", "fork", parent, "--at", "1:2")
    return cli(db, stub, "conversation", "replay", parent)


@pytest.mark.parametrize("command", ["run", "grid", "resume", "fork", "replay"])
def test_sigterm_stops_a_run_like_ctrl_c_and_resume_finishes_it(setup, command):
    db, exp_id, stub = setup
    proc = _started(db, exp_id, stub, command)
    row = wait_until(proc, lambda: stored(db, "calls", {"state": "in_flight"}), "a call")[0]
    run_id = row["conversation_id"]
    _out, err = terminate(proc, SLOW_S / 2)

    store = open_store_uri(db)
    try:
        assert store.conversations.get(run_id)["status"] == "interrupted"
        [cancelled] = [c for c in store.calls.for_conversation(run_id) if c["_id"] == row["_id"]]
        assert cancelled["state"] == "failed" and cancelled["error_kind"] == "cancelled"
        assert not list(store.db.calls.find({"state": "in_flight"}))
    finally:
        store.close()
    lines = [line for line in err.splitlines() if line.startswith("Stopped")]
    assert lines == [
        f"Stopped: {run_id} is kept and resumable; continue it with "
        f"llm-sim conversation resume {run_id}"
    ], err
    assert "Traceback" not in err

    stub.latency_s = 0.0
    _finish(db, stub, run_id)
    store = open_store_uri(db)
    try:
        assert store.conversations.get(run_id)["status"] == "done"
        calls = store.calls.for_conversation(run_id)
        assert [c["seq"] for c in calls] == list(range(1, len(calls) + 1))
        answered = [
            (c["purpose"], c["day"], c["index"], c["agent"]) for c in calls if c["state"] == "done"
        ]
        assert len(answered) == len(set(answered))  # no turn asked twice after the resume
    finally:
        store.close()


def test_sigterm_outside_a_run_ends_the_command_through_its_cleanup():
    """Between runs (reading the store, a prompt), SIGTERM unwinds like Ctrl-C: `finally`
    blocks run, so the store is closed, instead of the process vanishing mid-write."""
    cleaned, before = [], signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated) as stopped, sigterm_ends_the_command():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)  # interrupted at once by the handler
        finally:
            cleaned.append(True)
    assert stopped.value.code == 143 and cleaned == [True]
    assert signal.getsignal(signal.SIGTERM) == before  # the caller's handler is back


# the real CLI, which sends itself SIGTERM once the import has written its first conversation
TERMINATED_MID_IMPORT = """
import os, signal
from simulator.services import reference_import

write = reference_import._write_conversation

def write_then_terminate(store, conversation):
    written = write(store, conversation)
    os.kill(os.getpid(), signal.SIGTERM)
    return written

reference_import._write_conversation = write_then_terminate
from simulator.cli.main import main
main()
"""


def test_sigterm_during_an_import_leaves_nothing_half_imported(tmp_path):
    from simulator.store.database import open_database
    from simulator.testing.reference_fixture import build_prison_database

    source = open_database(str(tmp_path / "source"), "reference")
    build_prison_database(source.db)
    source.close()
    settings = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice"}
    env = {**os.environ, **settings}
    args = ["import", "reference", "--from", str(tmp_path / "source"), "--db-name", "reference"]
    args += ["--yes"]
    stopped = subprocess.run([sys.executable, "-c", TERMINATED_MID_IMPORT, *args], env=env,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert stopped.returncode == 143, stopped.stderr
    assert stopped.stderr.strip().splitlines() == [
        "Stopped: nothing was imported (what the import had written is removed again); run the "
        "same command again to import."
    ]
    store = open_store_uri(str(tmp_path / "store"))
    try:
        assert store.conversations.list() == [] and store.db.messages.count_documents({}) == 0
    finally:
        store.close()

    again = in_process.llm_sim(*args, env=settings)  # the run again: in this process
    assert again.returncode == 0, again.stderr
    store = open_store_uri(str(tmp_path / "store"))
    try:
        assert len(store.conversations.list()) == 4
    finally:
        store.close()
