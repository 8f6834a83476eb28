"""A scope holds ids, and export/measures read every table a batch at a time (issue 10).

At 100,000 conversations the old path held every conversation document while it resolved a
sweep (1.6 GB at 10,000 with the embedded store's index), and read calls and summaries with
one query per conversation. These tests pin what replaced it: the same rows, in the same
order, from reads that never take a whole sweep's documents, and on the embedded store none
of the per-collection indexes that grow with the store."""

from __future__ import annotations

import json

import pytest
from stored_messages import message_doc

from simulator.analysis import tables as tables_mod
from simulator.analysis.scope import resolve_scope
from simulator.analysis.streaming import export_scope, measure_scope
from simulator.analysis.tables import (
    _call_row,
    _summary_row,
    conversation_row,
    message_row,
)
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.batched import BatchReader
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec

ROLES = ["Guard", "Prisoner"]


def seeded_sweep(store, prison_path, repetitions: int = 5) -> str:
    """A sweep whose conversations have messages, ledger rows (out of order) and summaries,
    with another tool's documents inside their id ranges; returns the sweep id."""
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=4, days=2, agents={"Guard": 1, "Prisoner": 1}, llms=["mock:a"],
        repetitions=repetitions, seed=4,
    )  # fmt: skip
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    for n, conv in enumerate(store.sweeps.conversations(sweep["_id"])):
        cid = conv["_id"]
        for seq in range(3):
            store.messages.insert(message_doc(cid, seq, f"line {seq} of {cid}"))
        for seq in (3, 1, 2)[: 1 + n % 3]:  # some conversations have fewer rows
            store.calls.insert_at(cid, seq, {"conversation_id": cid, "purpose": "reply"})
        for day in (2, 1)[: n % 2 + 1]:
            summary = {
                "_id": f"{cid}-d{day:03d}", "conversation_id": cid, "day": day,
                "text": f"day {day}", "schema_version": 1,
            }  # fmt: skip
            store.conversations.add_summary(cid, summary, [{"day": day}])
        store.db.calls.insert_one({"_id": f"{cid}-c999999", "conversation_id": cid, "seq": 0})
        store.db.summaries.insert_one({"_id": f"{cid}-d999", "conversation_id": cid, "day": 0})
    return sweep["_id"]


def per_conversation_tables(store, conversation_ids: list[str]) -> dict[str, list[dict]]:
    """What export wrote before it streamed: every table read one conversation at a time."""
    tables: dict[str, list[dict]] = {"conversations": [], "messages": [], "summaries": []}
    tables["calls"] = []
    for cid in conversation_ids:
        row = conversation_row(store.conversations.get(cid), ROLES)
        key = row["cell_key"]
        tables["conversations"].append(row)
        tables["messages"] += [message_row(m, key) for m in store.messages.for_conversation(cid)]
        tables["summaries"] += [_summary_row(s, key) for s in store.conversations.summaries(cid)]
        tables["calls"] += [_call_row(c, key) for c in store.calls.for_conversation(cid)]
    return tables


def no_whole_scope_reads(store, monkeypatch) -> None:
    """Reads that take every document of a sweep or experiment, or query per conversation."""
    for repo, name in (
        (store.sweeps, "conversations"),
        (store.conversations, "list"),
        (store.conversations, "page"),
        (store.conversations, "get"),
        (store.conversations, "summaries"),
        (store.calls, "for_conversation"),
        (store.messages, "for_conversation"),
    ):
        monkeypatch.setattr(repo, name, None)


def test_export_reads_per_batch_and_writes_the_rows_it_wrote_before(
    store, prison_path, tmp_path, monkeypatch
):
    sweep_id = seeded_sweep(store, prison_path)
    ids = [c["_id"] for c in store.sweeps.conversations(sweep_id)]
    expected = per_conversation_tables(store, ids)
    assert len(expected["calls"]) == 9 and len(expected["summaries"]) == 7
    monkeypatch.setattr(tables_mod, "BATCH", 2)
    no_whole_scope_reads(store, monkeypatch)
    scope = resolve_scope(store, sweep_id)
    assert scope.conversation_ids == ids
    export_scope(store, scope, "jsonl", tmp_path / "out")
    for name, rows in expected.items():
        lines = (tmp_path / "out" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(line) for line in lines] == json.loads(json.dumps(rows)), name


def test_an_experiment_scope_lists_its_conversations_oldest_first_by_id(store, prison_path):
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=3, days=1, agents={"Guard": 1, "Prisoner": 1}, llms=["mock:a"],
        repetitions=4, seed=9,
    )  # fmt: skip
    sweep_service.create(store, view, spec, "alice")  # created in one millisecond or few: ties
    experiment_id = store.sweeps.list()[0]["experiment_id"]
    expected = [d["_id"] for d in reversed(store.conversations.list(experiment_id=experiment_id))]
    assert store.conversations.ids(experiment_id)[::-1] == expected
    assert resolve_scope(store, experiment_id).conversation_ids == expected


def test_batch_reads_keep_order_skip_missing_and_other_tools_documents(store, prison_path):
    sweep_id = seeded_sweep(store, prison_path)
    ids = store.sweeps.conversation_ids(sweep_id)
    assert ids == [c["_id"] for c in store.sweeps.conversations(sweep_id)]
    wanted = [ids[3], "conv_nothing", ids[0]]
    assert [d["_id"] for d in store.conversations.get_many(wanted)] == [ids[3], ids[0]]
    assert store.conversations.get_many(wanted)[0] == store.conversations.get(ids[3])
    calls = store.calls.for_conversations(wanted)
    summaries = store.conversations.summaries_for(wanted)
    for cid in wanted:
        assert calls[cid] == store.calls.for_conversation(cid)
        assert summaries[cid] == store.conversations.summaries(cid)
    assert [c["seq"] for c in calls[ids[3]]] == [3]  # the foreign seq-0 row is not ours
    assert [s["day"] for s in summaries[ids[3]]] == [1, 2]


def test_embedded_calls_of_the_first_ledger_ids_are_still_found(tmp_path, prison_path):
    store = open_store_uri(str(tmp_path / "store"))
    sweep_id = seeded_sweep(store, prison_path, repetitions=2)
    cid = store.sweeps.conversation_ids(sweep_id)[1]
    legacy = {"_id": "call_0001", "conversation_id": cid, "seq": 7, "schema_version": 1}
    store.db.calls.insert_one(legacy)
    found = store.calls.for_conversations([cid])[cid]
    assert found == store.calls.for_conversation(cid)
    assert found[-1]["_id"] == "call_0001"
    store.close()


@pytest.mark.parametrize("step", ["export", "measures"])
def test_embedded_export_and_measures_build_no_collection_index(tmp_path, prison_path, step):
    """litemongo's per-collection index holds about 4 KB per conversation and 1.7 KB per
    message (400 MB and 3.5 GB at 100,000 x 20), and its sort copies every document: a scope
    is read by id, by id range or in one pass over the table instead."""
    store = open_store_uri(str(tmp_path / "store"))
    sweep_id = seeded_sweep(store, prison_path, repetitions=3)
    store.close()

    store = open_store_uri(str(tmp_path / "store"))  # fresh: no in-memory index built yet
    scope = resolve_scope(store, sweep_id)
    if step == "export":
        export_scope(store, scope, "csv", tmp_path / "out")
    else:
        assert len(measure_scope(store, scope)) == 3
    for name in ("conversations", "messages", "calls", "summaries"):
        assert store.db[name]._store._query_index is None, name
    store.close()


class PlannedCollection:
    """A server collection that reports `plans` ($in, $eq) from explain() and records finds."""

    def __init__(self, in_plan: object, eq_plan: object):
        self.plans = {"$in": in_plan, "$eq": eq_plan}
        self.queries: list[dict] = []

    def find(self, query: dict) -> PlannedCursor:
        return PlannedCursor(self, query)


class PlannedCursor:
    def __init__(self, collection: PlannedCollection, query: dict):
        self.collection, self.query = collection, query

    def explain(self) -> dict:
        (operator,) = self.query["conversation_id"]
        return {"queryPlanner": {"winningPlan": self.collection.plans[operator]}}

    def __iter__(self):
        self.collection.queries.append(self.query)
        return iter([])


@pytest.mark.parametrize(
    ("in_plan", "eq_plan", "per_value"),
    [
        ({"stage": "FETCH", "inputStage": {"stage": "IXSCAN"}}, {"stage": "IXSCAN"}, False),
        ({"stage": "COLLSCAN"}, {"stage": "COLLSCAN"}, False),  # no index at all: one scan
        (None, None, False),  # no plan given: MongoDB's way
        (  # nx-27017: SQLite's plan, `$in` scans (array semantics), `$eq` searches the index
            [{"detail": "SCAN messages"}, {"detail": "SCAN json_each VIRTUAL TABLE INDEX 3:"}],
            [{"detail": "SEARCH messages USING INDEX idx_messages_conversation_id_seq (<expr>=?)"}],
            True,
        ),
    ],
)
def test_batch_reads_ask_per_conversation_only_where_the_server_would_scan(
    in_plan, eq_plan, per_value
):
    collection = PlannedCollection(in_plan, eq_plan)
    ids = [f"conv_{i}" for i in range(3)]
    assert list(BatchReader(collection).find(ids, {"schema_version": {"$exists": True}})) == []
    ours = {"schema_version": {"$exists": True}}
    if per_value:
        assert collection.queries == [{**ours, "conversation_id": {"$eq": i}} for i in ids]
    else:
        assert collection.queries == [{**ours, "conversation_id": {"$in": ids}}]
