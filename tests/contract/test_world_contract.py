"""Every registered world keeps the same promises through the command line: its experiment
imports and shows; a run on the loopback model stores the rows its sample names; a run killed
with SIGKILL mid-run resumes to the uninterrupted result (nothing lost, no row or call twice); a
replay sends byte-identical prompts and gets the same replies, as a new run linked to the
original; a fork at a unit shares the parent's rows before it (read from the parent) and, with
the parent's model and seed, continues as the parent did; every export format writes the world's
tables with the same rows; measures answer in JSON; the report is written.

What a world supplies for this is its `testing.sample` part (simulator/testing/world_sample.py):
a world added to the registry is checked here as soon as it ships one."""

from __future__ import annotations

import importlib.util
import itertools
import json
import signal
import threading
from collections import Counter
from pathlib import Path

import pytest
from process_waits import PATIENCE_S, stored, wait_until

from simulator import worlds

VOLATILE = {"_id", "conversation_id", "created_at", "latency_s"}  # differ between two runs


def content(rows: list[dict]) -> list[dict]:
    """What a row says, without what differs between two runs of the same thing."""
    return [{k: v for k, v in row.items() if k not in VOLATILE} for row in rows]


def units(world, rows: list[dict]) -> list[tuple]:
    return [tuple(row[field] for field in world.sample.unit) for row in rows]


def ledger(world, run_id: str) -> list[tuple]:
    """What a run's answered calls asked and got, in order."""
    rows = stored(world.env["SIM_DB"], "calls", {"conversation_id": run_id})
    done = [r for r in sorted(rows, key=lambda r: r["seq"]) if r["state"] == "done"]
    return [
        (r["purpose"], r.get("day"), r.get("index"), r["prompt_hash"], r["response"]) for r in done
    ]


def test_the_experiment_imports_lists_and_shows(world):
    listed = world.ok("experiment", "list", "--json").json()
    assert world.experiment_id in {e["id"] for e in listed}
    shown = world.ok("experiment", "show", world.experiment_id)
    text = " ".join(shown.out.split())
    for words in world.sample.show_text:
        assert " ".join(words.split()) in text


def test_a_run_stores_every_unit_once(world):
    shown = world.ok("conversation", "show", world.run_id, "--json").json()
    assert shown["conversation"]["status"] == "done"
    rows = shown[world.sample.rows]
    assert len(rows) == world.sample.row_count
    assert len(set(units(world, rows))) == len(rows)  # no unit twice
    assert {r["conversation_id"] for r in rows} == {world.run_id}
    listed = world.ok("conversation", "list", "--all", "--json").json()
    assert world.run_id in {c["_id"] for c in listed}
    calls = ledger(world, world.run_id)
    assert len(calls) == shown["conversation"]["counters"]["calls"] > 0


def test_a_run_killed_mid_run_resumes_to_the_uninterrupted_result(world):
    before = {c["_id"] for c in world.ok("conversation", "list", "--all", "--json").json()}
    db = world.env["SIM_DB"]
    answer = world.stub.reply_fn
    gate, held = threading.Event(), threading.Event()
    answered = itertools.count()

    def first_then_hold(body: dict) -> str:
        """The first call is answered; every later one waits (the run cannot finish)."""
        if next(answered) >= 1:
            held.set()
            gate.wait(PATIENCE_S)
        return answer(body)

    world.stub.reply_fn = first_then_hold
    try:
        proc = world.process(*world.run_args())
        run_id = wait_until(proc, lambda: _new_run(world, before), "the run stored")
        wait_until(
            proc,
            lambda: stored(db, "calls", {"conversation_id": run_id, "state": "done"}),
            "a call answered",
        )
        wait_until(proc, held.is_set, "a call in flight after it")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        world.stub.reply_fn = answer
        gate.set()
    assert proc.returncode == -signal.SIGKILL
    partial = world.rows(run_id)
    assert len(partial) < world.sample.row_count  # killed mid-run

    answered_before = len(ledger(world, run_id))
    sent_before = len(world.stub.chat_requests)
    resumed = world.ok("conversation", "resume", run_id, "--json").json()
    sent = len(world.stub.chat_requests) - sent_before
    assert resumed["conversation_id"] == run_id and resumed["status"] == "done"
    rows = world.rows(run_id)
    whole = world.rows(world.run_id)
    assert units(world, rows) == units(world, whole)  # every unit once, in order
    assert content(rows) == content(whole)  # nothing lost, nothing changed
    assert content(rows[: len(partial)]) == content(partial)  # what it stored before the kill
    calls = ledger(world, run_id)
    assert Counter(calls) == Counter(ledger(world, world.run_id))  # every call answered once
    assert sent == len(calls) - answered_before >= 1  # no answered call asked again
    doc = world.ok("conversation", "show", run_id, "--json").json()["conversation"]
    assert doc["status"] == "done"


def _new_run(world, before: set[str]) -> str | None:
    runs = stored(world.env["SIM_DB"], "conversations", {"experiment_id": world.experiment_id})
    return next((run["_id"] for run in runs if run["_id"] not in before), None)


def test_a_replay_sends_the_same_prompts_and_gets_the_same_replies(world):
    before = world.rows(world.run_id)
    since = len(world.stub.chat_requests)
    replayed = world.ok("conversation", "replay", world.run_id, "--json").json()
    # byte for byte the requests the run sent (a world's calls in flight together may reach
    # the model in another order)
    assert sorted(world.sent(since)) == sorted(world.run_requests)
    assert replayed["identical"] is True and replayed["verdict"] == "identical"
    assert replayed["divergence"] is None and replayed["status"] == "done"
    assert replayed["caveat"] is None  # Ollama with a seed on every call
    original = ledger(world, world.run_id)
    assert replayed["compared"] == replayed["original_calls"] == len(original)
    new_id = replayed["replay_id"]
    assert new_id != world.run_id and replayed["replay_of"] == world.run_id
    assert replayed["kind"] == world.kind
    assert ledger(world, new_id) == original  # the same prompts and replies, call by call
    rows = world.rows(new_id)
    assert len(rows) == world.sample.row_count and content(rows) == content(before)
    doc = world.ok("conversation", "show", new_id, "--json").json()["conversation"]
    assert doc["replay_of"] == world.run_id and worlds.kind_of(doc) == world.kind
    assert doc["status"] == "done"
    assert world.rows(world.run_id) == before  # the original untouched


def test_a_fork_shares_the_parents_prefix_and_continues_as_it_did(world):
    parent = world.run_id
    parent_before = world.rows(parent)
    forked = world.ok("conversation", "fork", parent, "--at", world.sample.fork_at, "--json")
    result = forked.json()
    assert result["fork_of"] == parent and result["edited"] is False
    assert result["fork_at"] == world.sample.fork_point
    assert any(f"shares its {world.sample.fork_shared} " in note for note in result["notes"])
    [entry] = result["conversations"]
    assert entry["status"] == "done"
    child = entry["conversation_id"]
    rows = world.rows(child)
    parent_rows = world.rows(parent)
    assert parent_rows == parent_before  # the parent untouched
    shared = world.sample.fork_shared
    assert [r["conversation_id"] for r in rows[:shared]] == [parent] * shared
    assert {r["conversation_id"] for r in rows[shared:]} == {child}
    assert rows[:shared] == parent_rows[:shared]  # read from the parent, not copied
    # the parent's model and seed on a prompt-deterministic model: the parent's rows again
    assert units(world, rows) == units(world, parent_rows)
    assert content(rows) == content(parent_rows)
    calls = ledger(world, child)  # the same prompts with the same per-call seeds
    assert len(calls) == world.sample.fork_calls
    assert calls == ledger(world, parent)[-len(calls) :]
    doc = world.ok("conversation", "show", child, "--json").json()["conversation"]
    assert doc["fork_of"] == parent and doc["fork_shared"] == shared
    assert doc["fork_at"] == world.sample.fork_point and worlds.kind_of(doc) == world.kind
    assert doc["counters"]["messages"] == len(rows) - shared  # its own rows only
    assert doc["counters"]["calls"] == len(calls)
    parent_doc = world.ok("conversation", "show", parent, "--json").json()["conversation"]
    assert _spec(doc) == _spec(parent_doc)  # the parent's settings, seed and start included


def _spec(doc: dict) -> dict:
    return {k: v for k, v in doc["spec"].items() if k != "defaults_applied"}


def _formats(world) -> list[str]:
    formats = list(world.sample.export_formats)
    if importlib.util.find_spec("pyarrow") is None and "parquet" in formats:
        formats.remove("parquet")
    return formats


def test_every_export_format_writes_the_worlds_tables(world):
    counts = {}
    for fmt in _formats(world):
        folder = world.base / f"export-{fmt}"
        written = world.ok("export", world.run_id, "--format", fmt, "-o", str(folder), "--json")
        files = written.json()["files"]
        tables = {f["table"]: f["rows"] for f in files}
        assert sum(tables.values()) > 0, (fmt, tables)
        for table in world.sample.export_tables:
            assert tables.get(table, 0) > 0, (fmt, table, tables)
        for f in files:
            path = Path(f["path"])
            assert path.parent == folder and path.suffix == f".{fmt}" and path.is_file()
        counts[fmt] = tables
    assert len({json.dumps(c, sort_keys=True) for c in counts.values()}) == 1  # same rows


@pytest.mark.parametrize("scope", ["run", "experiment"])
def test_measures_answer_in_json(world, scope):
    target = world.run_id if scope == "run" else world.experiment_id
    answer = world.ok("measures", target, "--json").json()
    assert answer["scope"]["id"] == target and answer["scope"]["conversations"] >= 1
    assert answer["measures"] and answer["cells"]
    assert all(cell["n"] >= 1 for cell in answer["cells"])
    if scope == "run":
        # first the run's own cell (with the runs that repeat it: its replay, a same-seed fork);
        # a world that measures a fork from its fork point adds that cell after it
        cell = answer["cells"][0]
        for name, mean in world.sample.measures:
            assert name in answer["measures"], name
            assert cell[f"{name}_mean"] == pytest.approx(mean), name


def test_the_report_is_written(world):
    path = world.base / "report.html"
    written = world.ok("report", world.run_id, "-o", str(path))
    assert "wrote " in written.out + written.err and path.is_file()
    html = path.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html") and "</html>" in html
    assert world.run_id in html
    for words in world.sample.report_text:
        assert words in html, words
