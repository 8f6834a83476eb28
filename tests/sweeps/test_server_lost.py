"""The MongoDB server goes away mid-sweep: one sentence naming its host, exit status 75, no
conversation `failed` (a lost server is not theirs to fail); once the server is back on the
same port with the same data, `sweep resume` finishes the sweep with nothing lost and no turn
answered twice."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from process_waits import stored, wait_until
from sweep_processes import MESSAGES, check_exact_finish, cli, make_sweep

from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing.wire_server import free_port, wire_server

DB_NAME = "server_lost"


@pytest.mark.slow
def test_a_lost_server_stops_the_sweep_resumably(tmp_path, stub, prison_path, monkeypatch):
    monkeypatch.setenv("SIM_DB_TIMEOUT_MS", "2000")  # how long a write waits for the server
    folder, port = tmp_path / "nx", free_port()
    folder.mkdir()
    stub.latency_s = 0.2  # a sweep still running when the server goes
    with wire_server(folder, start_timeout_s=20, port=port) as uri:
        sweep_id = make_sweep(uri, prison_path, repetitions=4, db_name=DB_NAME)
        proc = cli(uri, stub, "sweep", "run", sweep_id, "--concurrency", "2", db_name=DB_NAME)
        wait_until(
            proc, lambda: len(stored(uri, "messages", {}, DB_NAME)) >= 3, "three messages stored"
        )
    # the server has stopped (SIGTERM, as a restart or a crash of its host would)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 75, err
    assert "Traceback" not in err
    sentence = err.strip().splitlines()[-1]  # the lines before are the sweep's header
    assert re.fullmatch(
        rf"The MongoDB server at 127\.0\.0\.1:{port} stopped answering "
        r"\((connection refused|connection closed|connection reset|timed out)\); "
        r"everything stored before that is kept: once it is back, run "
        rf"`llm-sim sweep resume {sweep_id}`\.",
        sentence,
    ), err

    stub.latency_s = 0.02
    with wire_server(folder, start_timeout_s=20, port=port) as uri:
        store = open_store(open_database(uri, DB_NAME))
        try:
            statuses = Counter(c["status"] for c in store.sweeps.conversations(sweep_id))
        finally:
            store.close()
        assert "failed" not in statuses and statuses["done"] < 4, statuses
        resumed = cli(uri, stub, "sweep", "resume", sweep_id, "--concurrency", "2", "--json",
                      db_name=DB_NAME)  # fmt: skip
        out, err = resumed.communicate(timeout=240)
        assert resumed.returncode == 0, err
        assert json.loads(out)["complete"]
        conversations = check_exact_finish(uri, sweep_id, DB_NAME)
        store = open_store(open_database(uri, DB_NAME))
        try:
            for conv in conversations:
                calls = store.calls.for_conversation(conv["_id"])
                seqs = [c["seq"] for c in calls]
                assert len(seqs) == len(set(seqs))  # no ledger row written twice
                answered = [
                    (c["day"], c["index"])
                    for c in calls
                    if c["purpose"] == "agent_turn" and c["state"] == "done"
                ]
                assert len(answered) == len(set(answered)) == MESSAGES  # each turn once
        finally:
            store.close()
