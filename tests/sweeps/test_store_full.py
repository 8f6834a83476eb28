"""The embedded store's disk fills up mid-run: one sentence naming the store's folder, exit
status 75, the runs stopped resumable (never `failed`), and the resume finishes them once there
is room again. "Full" is SQLite's own: each collection file may grow only a few pages
(`PRAGMA max_page_count`), after which every write that needs a page fails with "database or
disk is full", exactly as on a full disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from process_waits import cli_here
from sweep_processes import MESSAGES, check_exact_finish, cli, make_sweep

from simulator.services import experiments as exp_service
from simulator.store.store import open_store_uri

# the real CLI, with the collection files named in FULL_COLLECTIONS ("*": every one) limited
# to their size at opening plus FULL_AFTER_PAGES pages
FULL_AFTER = """
import os
from litemongo import sqlite_store

opened = sqlite_store.CollectionStore.open
limited = os.environ["FULL_COLLECTIONS"].split(",")

def open_nearly_full(self):
    opened(self)
    if self._path.stem in limited or limited == ["*"]:
        pages = self._connection.execute("PRAGMA page_count").fetchone()[0]
        extra = int(os.environ["FULL_AFTER_PAGES"])
        self._connection.execute(f"PRAGMA max_page_count = {pages + extra}")

sqlite_store.CollectionStore.open = open_nearly_full
from simulator.cli.main import main
main()
"""
NEARLY_FULL = [sys.executable, "-c", FULL_AFTER]


def _one_sentence(err: str, db: str, then: str) -> None:
    """Nothing on stderr but the run's header lines and the sentence; no traceback."""
    assert "Traceback" not in err, err
    sentence = (
        f"The disk holding the store ({os.path.realpath(db)}) is full (database or disk is "
        f"full); everything stored before that is kept: free some space, then {then}."
    )
    assert sentence in err.splitlines(), err
    assert err.rstrip().endswith(sentence), err


HOT_PATH = "prompts,calls,messages,summaries"  # what a run writes most; its statuses still fit


@pytest.mark.parametrize("full", [HOT_PATH, "*"])
def test_a_full_disk_stops_a_sweep_resumably(tmp_path, stub, prison_path, monkeypatch, full):
    db = str(tmp_path / "store")
    sweep_id = make_sweep(db, prison_path, repetitions=4)
    monkeypatch.setenv("FULL_COLLECTIONS", full)
    monkeypatch.setenv("FULL_AFTER_PAGES", "3")
    proc = cli(db, stub, "sweep", "run", sweep_id, "--concurrency", "2", python=NEARLY_FULL)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 75, err
    _one_sentence(err, db, f"run `llm-sim sweep resume {sweep_id}`")

    store = open_store_uri(db)
    try:
        conversations = store.sweeps.conversations(sweep_id)
        statuses = {c["status"] for c in conversations}
        assert "failed" not in statuses  # a full disk is not the runs' fault
        stopped = [c for c in conversations if c["status"] == "interrupted"]
        assert all("is full" in c["error"] for c in stopped)
        if full == HOT_PATH:  # the statuses and the leases could still be written
            assert stopped and "running" not in statuses
            assert all(c.get("lease_owner") is None for c in conversations)
            assert not list(store.db.calls.find({"state": "in_flight"}))
        # else some may be left `running` under the lease of the process that is gone
    finally:
        store.close()

    monkeypatch.setenv("FULL_COLLECTIONS", "")  # space again
    resumed = cli_here(db, stub, "sweep", "resume", sweep_id, "--concurrency", "2", "--json")
    out, err = resumed.stdout, resumed.stderr
    assert resumed.returncode == 0, err
    assert json.loads(out)["complete"]
    check_exact_finish(db, sweep_id)


def test_a_full_disk_stops_a_run_resumably(tmp_path, stub, prison_path, monkeypatch):
    db = str(tmp_path / "store")
    store = open_store_uri(db)
    exp_id = exp_service.import_yaml(store, prison_path, "alice").id
    store.close()
    monkeypatch.setenv("FULL_COLLECTIONS", HOT_PATH)
    monkeypatch.setenv("FULL_AFTER_PAGES", "2")
    args = ["run", exp_id, "--agents", "guard=1,prisoner=2", "--messages", str(MESSAGES)]
    args += ["--days", "2", "--llm", "openai:stub"]
    proc = cli(db, stub, *args, python=NEARLY_FULL)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 75, err
    store = open_store_uri(db)
    try:
        [doc] = store.conversations.list()
        assert doc["status"] == "interrupted"
        kept = len(store.messages.for_conversation(doc["_id"]))
        assert kept < MESSAGES
    finally:
        store.close()
    _one_sentence(err, db, f"run `llm-sim conversation resume {doc['_id']}`")

    monkeypatch.setenv("FULL_COLLECTIONS", "")
    resumed = cli_here(db, stub, "conversation", "resume", doc["_id"])
    err = resumed.stderr
    assert resumed.returncode == 0, err
    store = open_store_uri(db)
    try:
        assert store.conversations.get(doc["_id"])["status"] == "done"
        messages = store.messages.for_conversation(doc["_id"])
        assert [m["seq"] for m in messages] == list(range(MESSAGES))
    finally:
        store.close()


def test_the_entry_is_the_real_cli():
    """The patched entry runs `simulator.cli.main.main`, the console script's target, and the
    limit is SQLite's: a write past it fails as a full disk does."""
    assert "from simulator.cli.main import main\nmain()" in FULL_AFTER
    probe = subprocess.run(
        [sys.executable, "-c", "import sqlite3; c = sqlite3.connect(':memory:'); "
         "c.execute('PRAGMA max_page_count = 2'); c.execute('CREATE TABLE t(x)'); "
         "c.execute('INSERT INTO t VALUES (randomblob(100000))')"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert "database or disk is full" in probe.stderr
