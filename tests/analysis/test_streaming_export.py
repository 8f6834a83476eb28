"""`llm-sim export` streams: batches of conversations, one message read per batch, columns
that first appear late kept in every format, and nothing half-written when a batch fails."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from stored_messages import message_doc

from simulator.analysis import tables as tables_mod
from simulator.analysis.exports import write_batches
from simulator.analysis.scope import resolve_scope
from simulator.analysis.streaming import export_scope
from simulator.analysis.tables import conversation_row, message_row
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec


def five_conversations(store, prison_path) -> str:
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=3, days=1, agents={"Guard": 1, "Prisoner": 1}, llms=["mock:a"],
        repetitions=5, seed=2,
    )  # fmt: skip
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    for conv in store.sweeps.conversations(sweep["_id"]):
        for seq in range(3):
            store.messages.insert(message_doc(conv["_id"], seq, f"line {seq}\nof {conv['_id']}"))
    return sweep["_id"]


def test_export_reads_one_batch_at_a_time_and_keeps_every_row(
    store, prison_path, tmp_path, monkeypatch
):
    sweep_id = five_conversations(store, prison_path)
    scope = resolve_scope(store, sweep_id)
    monkeypatch.setattr(tables_mod, "BATCH", 2)
    batches: list[int] = []
    real = store.messages.for_conversations
    monkeypatch.setattr(
        store.messages, "for_conversations", lambda ids: batches.append(len(ids)) or real(ids)
    )
    monkeypatch.setattr(store.messages, "for_conversation", None)  # no query per conversation
    files = export_scope(store, scope, "jsonl", tmp_path / "out")
    assert batches == [2, 2, 1]
    assert {f["table"]: f["rows"] for f in files}["messages"] == 15
    lines = (tmp_path / "out" / "messages.jsonl").read_text(encoding="utf-8").splitlines()
    expected = [
        message_row(m, conversation_row(c, ["Guard", "Prisoner"])["cell_key"])
        for c in store.sweeps.conversations(sweep_id)
        for m in real([c["_id"]])[c["_id"]]
    ]
    assert [json.loads(line) for line in lines] == json.loads(json.dumps(expected))


def test_messages_for_conversations_reads_only_ours_without_the_embedded_index(
    tmp_path, prison_path
):
    store = open_store_uri(str(tmp_path / "store"))
    sweep_id = five_conversations(store, prison_path)
    ids = [c["_id"] for c in store.sweeps.conversations(sweep_id)]
    store.db.messages.insert_one(  # another tool's message with an id in the same range
        {"_id": f"{ids[0]}-d001-m00099", "conversation_id": ids[0], "seq": 99, "text": "x"}
    )
    expected = {cid: store.messages.for_conversation(cid) for cid in ids}
    store.close()

    store = open_store_uri(str(tmp_path / "store"))  # fresh: no in-memory index built yet
    found = store.messages.for_conversations([*reversed(ids), "conv_nothing"])
    assert found == {**{cid: expected[cid] for cid in reversed(ids)}, "conv_nothing": []}
    assert all(len(docs) == 3 for cid, docs in found.items() if cid != "conv_nothing")
    # the embedded store's per-collection index (about 1.7 KB a message) was never built
    assert store.db.messages._store._query_index is None
    store.close()


def batches_with_a_late_column() -> list[dict[str, list[dict]]]:
    return [
        {"t": [{"a": 1, "b": None, "s": None}, {"a": 2, "b": None, "s": "x"}]},
        {"t": [{"a": None, "b": "late\ntext", "s": "y", "c": 1.5}]},
        {"t": []},
        {"t": [{"a": 4, "s": None, "c": 2, "d": True}]},
    ]


def test_csv_and_jsonl_keep_a_column_that_first_appears_late(tmp_path):
    rows = [r for batch in batches_with_a_late_column() for r in batch["t"]]
    (path,), counts = write_batches(batches_with_a_late_column(), ["t"], "csv", tmp_path / "c")
    assert counts == {"t": 4}
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == ["a", "b", "s", "c", "d"]
        assert list(reader) == [
            {"a": "1", "b": "", "s": "", "c": "", "d": ""},
            {"a": "2", "b": "", "s": "x", "c": "", "d": ""},
            {"a": "", "b": "late\ntext", "s": "y", "c": "1.5", "d": ""},
            {"a": "4", "b": "", "s": "", "c": "2", "d": "True"},
        ]
    (path,), _ = write_batches(batches_with_a_late_column(), ["t"], "jsonl", tmp_path / "j")
    assert [json.loads(x) for x in path.read_text().splitlines()] == rows


def test_parquet_types_every_column_as_pandas_did_for_the_whole_table(tmp_path):
    pd = pytest.importorskip("pandas")
    rows = [r for batch in batches_with_a_late_column() for r in batch["t"]]
    before = tmp_path / "before.parquet"  # what the in-memory export wrote
    pd.DataFrame.from_records(rows, columns=["a", "b", "s", "c", "d"]).to_parquet(before)
    (path,), _ = write_batches(batches_with_a_late_column(), ["t"], "parquet", tmp_path / "p")
    pd.testing.assert_frame_equal(pd.read_parquet(path), pd.read_parquet(before))
    (empty,), _ = write_batches([{"t": []}], ["t"], "parquet", tmp_path / "e")
    assert len(pd.read_parquet(empty)) == 0


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("existing", [False, True])
def test_a_failure_mid_stream_leaves_nothing(tmp_path, prison_path, monkeypatch, fmt, existing):
    store = open_store_uri(f"mongomock://stream-{fmt}-{existing}")
    sweep_id = five_conversations(store, prison_path)
    scope = resolve_scope(store, sweep_id)
    monkeypatch.setattr(tables_mod, "BATCH", 2)
    real, seen = store.calls.for_conversations, []

    def calls(ids: list[str]) -> dict[str, list[dict]]:
        seen.append(ids)
        if len(seen) == 2:  # the second batch: the first is already on disk
            raise RuntimeError("the store went away")
        return real(ids)

    monkeypatch.setattr(store.calls, "for_conversations", calls)
    out = tmp_path / "out"
    if existing:
        out.mkdir()
        (out / "messages.jsonl").write_text("the previous export\n")
    with pytest.raises(RuntimeError, match="went away"):
        export_scope(store, scope, fmt, out)
    if existing:
        assert [p.name for p in out.iterdir()] == ["messages.jsonl"]
        assert (out / "messages.jsonl").read_text() == "the previous export\n"
    else:
        assert not out.exists()
    assert list(Path(tmp_path).iterdir()) == ([out] if existing else [])
