"""The queries of `sweep status` and of claiming are ones a MongoDB server answers from its
(sweep_id, status) index. nx-27017 (MongoDB's protocol over SQLite) searches an index only for
`$eq`, and scanned 100,000 conversations for a bare value or `$in`: these tests ask the server
for its plan of every query the tool sent."""

from __future__ import annotations

import json
import uuid

import pymongo
import pytest
from pymongo import monitoring

from simulator.services import sweeps as sweep_service
from simulator.store.database import open_database
from simulator.store.store import open_store


class FilterRecorder(monitoring.CommandListener):
    """The filters of the find and aggregate commands sent while `active`."""

    def __init__(self) -> None:
        self.active = False
        self.filters: list[tuple[str, dict]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if not self.active:
            return
        command = event.command
        if event.command_name == "find":
            self.filters.append((command["find"], dict(command.get("filter", {}))))
        elif event.command_name == "aggregate":
            for stage in command.get("pipeline", []):
                if "$match" in stage:
                    self.filters.append((command["aggregate"], dict(stage["$match"])))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


RECORDER = FilterRecorder()
monitoring.register(RECORDER)  # process-wide; records only while a test turns it on


@pytest.fixture
def wire_store(wire_server):
    name = f"t_{uuid.uuid4().hex[:10]}"
    store = open_store(open_database(wire_server, name))
    yield store, pymongo.MongoClient(wire_server)[name]
    store.close()


def test_status_and_claims_search_the_index_on_nx_27017(wire_store):
    store, db = wire_store
    statuses = ["done", "failed", "running", "pending", "interrupted"] * 4
    docs = [
        {"_id": f"conv_{i:03d}", "key": f"k{i}", "schema_version": 1, "sweep_id": "s1",
         "order": i, "status": status, "lease_owner": "h:1:w", "lease_expires_ms": 0,
         "counters": {"calls": 1, "tokens_out": 2}}
        for i, status in enumerate(statuses)
    ]  # fmt: skip
    store.sweeps.insert_conversations(docs)
    sweep = {"_id": "s1", "schema_version": 1, "name": "q", "experiment_id": "e", "owner": "a"}
    store.db.sweeps.insert_one(sweep)
    RECORDER.filters.clear()
    RECORDER.active = True
    try:
        status = sweep_service.status(store, "s1")
        claimable = store.sweeps.claimable_ids("s1")
    finally:
        RECORDER.active = False
    assert status["counts"]["failed"] == 4 and status["calls"] == 16
    assert claimable[:2] == ["conv_003", "conv_004"]  # waiting ones in sweep order first
    on_sweep = [(name, f) for name, f in RECORDER.filters if "sweep_id" in f]
    assert len(on_sweep) >= 5
    for name, query in on_sweep:
        plan = db[name].find(query).explain()["queryPlanner"]["winningPlan"]
        assert "USING INDEX" in json.dumps(plan, default=str), (query, plan)
