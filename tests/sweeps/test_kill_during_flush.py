"""kill -9 in the middle of a batched flush: the groups of that flush written so far are stored,
the writes queued behind them (ledger outcomes, messages, summaries) are not. The resumed sweep
still finishes exactly, and the store never holds a message without its completed call, or a
call without its prompt."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from process_waits import cli_here
from sweep_processes import check_exact_finish, cli, make_sweep

from simulator.store.database import open_database
from simulator.store.store import open_store

# The real CLI, with the group commit made to SIGKILL its own process right after a batch's
# ledger outcomes were written and before the messages queued in that same batch: the exact
# moment a crash makes a flush half-done. It first notes what the batch still held.
KILL_MID_FLUSH = """
import os, signal, sys
from simulator.store import group_commit

marker = sys.argv.pop(1)
write_batch, write = group_commit.GroupCommit._write_batch, group_commit.GroupCommit._write
order = group_commit.ORDER
current = []
partial = {"seen": 0}

def spy_batch(self, batch):
    current[:] = batch
    return write_batch(self, batch)

def spy_write(self, collection, kind, ops):
    outcome = write(self, collection, kind, ops)
    done = order.index((collection, kind))
    later = [op for op in current if order.index((op.collection, op.kind)) > done]
    if later:
        partial["seen"] += 1
        if partial["seen"] == 3:  # a few flushes in, with part of this one written
            with open(marker, "w") as out:
                out.write(" ".join(f"{op.collection}:{op.kind}" for op in later))
            os.kill(os.getpid(), signal.SIGKILL)
    return outcome

group_commit.GroupCommit._write_batch = spy_batch
group_commit.GroupCommit._write = spy_write
from simulator.cli.main import main
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("flavour", ["embedded", "wire"])
def test_kill_during_a_batched_flush_then_resume(tmp_path, stub, prison_path, flavour, request):
    db = (
        str(tmp_path / "store") if flavour == "embedded" else request.getfixturevalue("wire_server")
    )
    db_name = f"kill_flush_{tmp_path.name}"[:60]
    sweep_id = make_sweep(db, prison_path, repetitions=16, db_name=db_name)
    marker = tmp_path / "killed-mid-flush"
    patched = [sys.executable, "-c", KILL_MID_FLUSH, str(marker)]
    killed = cli(
        db, stub, "sweep", "run", sweep_id, "--concurrency", "16", db_name=db_name, python=patched
    )
    _, err = killed.communicate(timeout=240)
    assert killed.returncode == -9, err
    unwritten = marker.read_text().split()
    assert unwritten  # writes were queued behind the groups already written when it died

    store = open_store(open_database(db, db_name))
    try:
        _assert_no_message_outruns_its_call(store)
    finally:
        store.close()

    resumed = cli_here(db, stub, "sweep", "resume", sweep_id, "--concurrency", "16", "--json",
                       db_name=db_name)  # fmt: skip
    out, err = resumed.stdout, resumed.stderr
    assert resumed.returncode == 0, err
    assert json.loads(out)["complete"]
    check_exact_finish(db, sweep_id, db_name)
    store = open_store(open_database(db, db_name))
    try:
        _assert_no_message_outruns_its_call(store)
    finally:
        store.close()


def _assert_no_message_outruns_its_call(store) -> None:
    """Every stored message has a completed agent-turn call at its place, and every call's
    prompt is stored: what one-at-a-time writing guaranteed, batched writing keeps."""
    calls = list(store.db.calls.find({}))
    prompts = {doc["_id"] for doc in store.db.prompts.find({}, {"_id": 1})}
    assert all(call["prompt_hash"] in prompts for call in calls)
    answered = {
        (call["conversation_id"], call["day"], call["index"])
        for call in calls
        if call["purpose"].startswith("agent_turn") and call["state"] == "done"
    }
    for message in store.db.messages.find({}):
        assert (message["conversation_id"], message["day"], message["index"]) in answered


def test_the_patched_entry_is_the_real_cli():
    """The kill test's entry runs `simulator.cli.main.main`, the console script's target."""
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert 'llm-sim = "simulator.cli.main:main"' in pyproject
    assert "from simulator.cli.main import main\nmain()" in KILL_MID_FLUSH
