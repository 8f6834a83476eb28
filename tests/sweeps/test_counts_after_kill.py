"""A real `sweep run` killed with SIGKILL mid-sweep leaves the embedded store's kept counts
(store/conversation_rows.py) equal to a full recount of the documents, and `sweep status`
from another process says what the recount says."""

from __future__ import annotations

import json
import signal
from collections import Counter

import pytest
from process_waits import stored, wait_until
from sweep_processes import cli, make_sweep

from simulator.store import conversation_rows as rows
from simulator.store.database import open_database
from simulator.store.embedded import table_of
from simulator.store.store import open_store


def recount(db: str, sweep_id: str) -> tuple[Counter, list[str]]:
    """Statuses counted from the documents, and the kept rows' drift from them."""
    store = open_store(open_database(db, "llm_simulator"))
    try:
        table = table_of(store.db.conversations)
        statuses = Counter(
            doc.get("status")
            for doc in (table._decode_doc(raw) for (raw,) in table._connection.execute(
                "SELECT doc FROM documents"
            ))
            if doc.get("sweep_id") == sweep_id
        )  # fmt: skip
        return statuses, rows.drift(table)
    finally:
        store.close()


@pytest.mark.slow
def test_counts_equal_a_recount_after_a_sigkill_mid_sweep(tmp_path, stub, prison_path):
    db = str(tmp_path / "store")
    sweep_id = make_sweep(db, prison_path, repetitions=10)
    for wanted in ("running", "done"):  # killed with leases held, then with some finished
        proc = cli(db, stub, "sweep", "run", sweep_id, "--concurrency", "3")

        def reached(status: str = wanted) -> bool:
            return bool(stored(db, "conversations", {"sweep_id": sweep_id, "status": status}))

        wait_until(proc, reached, f"a {wanted} conversation")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        statuses, drift = recount(db, sweep_id)
        assert drift == []
        assert statuses[wanted] >= 1
        status = cli(db, stub, "sweep", "status", sweep_id, "--json")
        out, err = status.communicate(timeout=60)
        assert status.returncode == 0, err
        shown = {k: v for k, v in json.loads(out)["counts"].items() if v}
        assert shown == dict(statuses)
    resumed = cli(db, stub, "sweep", "resume", sweep_id, "--concurrency", "3", "--json")
    out, err = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, err
    assert json.loads(out)["complete"]
    statuses, drift = recount(db, sweep_id)
    assert drift == [] and statuses == {"done": 10}
