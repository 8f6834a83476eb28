"""Exports round-trip: the tables hold exactly what the store holds, in every format, on every
store flavour, and through the real `llm-sim export` / `llm-sim measures` commands."""

from __future__ import annotations

import asyncio
import csv
import json
import subprocess
import sys
from pathlib import Path

import in_process
import pytest

from simulator.analysis.exports import write_tables
from simulator.analysis.scope import resolve_scope
from simulator.analysis.tables import load_tables
from simulator.errors import NotFound, UserError
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.services.sweep_runs import SweepRunner
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]


def small_sweep(store, prison_path) -> dict:
    """2 variants x 2 repetitions, 2 days: 4 conversations, 16 messages, 8 summaries."""
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=4,
        days=2,
        agents={"Guard": 1, "Prisoner": 1},
        llms=["mock:a"],
        repetitions=2,
        variants={"Prisoner/Goal": "all"},
        seed=3,
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")

    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait())
        try:
            await SweepRunner(store, sweep["_id"], llms, poll_s=0.05, concurrency=2).run()
        finally:
            await llms.aclose()

    asyncio.run(go())
    first = store.sweeps.conversations(sweep["_id"])[0]["_id"]
    store.scores.add("judge", "conversation", first, {"hostile": "yes"}, conversation_id=first)
    message = store.messages.for_conversation(first)[0]["_id"]
    store.scores.add("tox", "message", message, {"p": 0.25, "label": "calm"}, conversation_id=first)
    return sweep


def store_counts(store) -> dict[str, int]:
    db = store.db
    return {
        "conversations": db.conversations.count_documents({}),
        "messages": db.messages.count_documents({}),
        "summaries": db.summaries.count_documents({}),
        "calls": db.calls.count_documents({}),
        "scores": 3,  # three values over two score documents
    }


def test_tables_equal_the_store_on_every_flavour(store, prison_path, tmp_path):
    sweep = small_sweep(store, prison_path)
    scope = resolve_scope(store, sweep["_id"])
    tables = load_tables(store, scope)
    assert {k: len(v) for k, v in tables.items()} == store_counts(store)
    row = tables["conversations"][0]
    assert row["variant_Prisoner/Goal"] and row["llm_Guard"] == "mock:a"
    assert row["agents_Prisoner"] == 1 and row["n_messages"] == 4
    assert row["started_at"] <= row["finished_at"] and row["duration_s"] >= 0
    for rows in tables.values():  # scalars only
        for r in rows:
            assert all(v is None or isinstance(v, str | int | float | bool) for v in r.values())

    exp_scope = resolve_scope(store, sweep["experiment_id"])
    assert sorted(exp_scope.conversation_ids) == sorted(scope.conversation_ids)
    one = resolve_scope(store, scope.conversation_ids[0])
    assert one.kind == "conversation" and one.sweep["_id"] == sweep["_id"]
    assert len(load_tables(store, one)["messages"]) == 4
    assert [r["name"] for r in one.experiment["roles"]] == ["Guard", "Prisoner"]

    for fmt in ("jsonl", "csv", "parquet"):
        paths = write_tables(tables, fmt, tmp_path / fmt)
        assert {p.stem: read_rows(p) for p in paths} == {k: len(v) for k, v in tables.items()}, fmt


def read_rows(path: Path) -> int:
    if path.suffix == ".jsonl":
        return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line)
    if path.suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as handle:
            return sum(1 for _ in csv.DictReader(handle))
    import pandas as pd

    return len(pd.read_parquet(path))


def test_csv_keeps_line_breaks_and_missing_columns(tmp_path):
    tables = {"messages": [{"a": 'one\ntwo, "three"', "b": None}, {"a": "x", "c": 1}]}
    (path,) = write_tables(tables, "csv", tmp_path)
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows == [{"a": 'one\ntwo, "three"', "b": "", "c": ""}, {"a": "x", "b": "", "c": "1"}]


def test_parquet_without_pandas_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(UserError, match=r"pip install -e '\.\[analysis\]'"):
        write_tables({"messages": []}, "parquet", tmp_path)


def test_unknown_ids_are_user_errors():
    from simulator.store.store import open_store_uri

    store = open_store_uri("mongomock://unknown-ids")
    with pytest.raises(NotFound):
        resolve_scope(store, "sweep_000000")
    with pytest.raises(UserError, match="exp_, sweep_ or conv_"):
        resolve_scope(store, "banana")


def sim(*args: str, db: Path) -> subprocess.CompletedProcess:
    return in_process.llm_sim(*args, env={"SIM_DB": str(db), "SIM_USER": "alice"}, cwd=db.parent)


def test_cli_export_and_measures_end_to_end(tmp_path, prison_path):
    from simulator.store.store import open_store_uri

    db = tmp_path / "store"
    store = open_store_uri(str(db))
    sweep = small_sweep(store, prison_path)
    expected = store_counts(store)
    store.close()

    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"out_{fmt}"
        result = sim("export", sweep["_id"], "--format", fmt, "-o", str(out), "--json", db=db)
        assert result.returncode == 0, result.stderr
        files = json.loads(result.stdout)["files"]
        assert {f["table"]: f["rows"] for f in files} == expected
        assert {Path(f["path"]).stem: read_rows(Path(f["path"])) for f in files} == expected

    result = sim("measures", sweep["_id"], "--json", db=db)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert len(data["conversations"]) == 4 and len(data["cells"]) == 2
    assert all(c["n"] == 2 and c["messages_mean"] == 4 for c in data["cells"])
    assert (
        "score_judge_hostile_mean" in data["cells"][0]
        or "score_judge_hostile_mean" in (data["cells"][1])
    )

    shown = sim("measures", sweep["_id"], "--measure", "words_Guard", db=db)
    assert shown.returncode == 0, shown.stderr
    assert "words_Guard" in shown.stdout and "[" in shown.stdout
    bad = sim("measures", sweep["_id"], "--measure", "nonsense", db=db)
    assert bad.returncode == 2 and "words_Guard" in bad.stderr
    missing = sim("export", "sweep_ffffff", "-o", str(tmp_path / "x"), db=db)
    assert missing.returncode == 2 and "no sweep" in missing.stderr
