"""Forks in exports, scopes and measures: a conversation with forks is analysed with its family,
conversation rows say where each branch came from (`parent_id`, `fork_at`, `fork_group`,
`fork_repetition`, `edited`, `replay_of`), every message is exported once (under the
conversation that stored it), and a fork's measures cover its own messages only."""

from __future__ import annotations

import csv
import json

import pytest
from branch_family import AT, EDIT, forked_family, stub_models
from fork_helpers import fork_and_run, parent_chat

from simulator.analysis.measures import conversation_measures
from simulator.analysis.scope import resolve_scope
from simulator.analysis.tables import load_tables
from simulator.store.store import open_store_uri

FORK_COLUMNS = ("parent_id", "fork_at", "fork_group", "fork_repetition", "edited", "replay_of")


@pytest.fixture
def family(tmp_path, monkeypatch):
    """A parent, two edited forks on model b (one command), a fork of the first fork at 1:6
    without an edit, and a conversation without forks; stored in the embedded store."""
    with stub_models(monkeypatch) as server:
        uri = str(tmp_path / "store")
        store = open_store_uri(uri)
        try:
            parent, forks = forked_family(store, models=("b",))
            [grandchild] = fork_and_run(store, forks["b"][0], "1:6", llm="ollama:c")
            parent_chat(store, messages=4)  # no forks: never in the family's scope
        finally:
            store.close()
        env = {"SIM_DB": uri, "SIM_USER": "alice", "OLLAMA_HOST": server.url}
        yield {"env": env, "parent": parent, "forks": forks["b"], "grandchild": grandchild}


def _rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_family_is_the_scope_of_a_conversation_with_forks(store, monkeypatch):
    with stub_models(monkeypatch):
        parent, forks = forked_family(store, models=("a", "b"), repetitions=1, messages=6)
        [below] = fork_and_run(store, forks["a"][0], "1:5", llm="ollama:b")
        lone = parent_chat(store, messages=2)
    first, second = forks["a"][0], forks["b"][0]
    assert resolve_scope(store, parent).conversation_ids == [parent, first, below, second]
    assert resolve_scope(store, first).conversation_ids == [first, below]
    assert resolve_scope(store, second).conversation_ids == [second]
    assert resolve_scope(store, lone).conversation_ids == [lone]  # as before forks
    experiment = store.conversations.get(parent)["experiment_id"]
    ids = resolve_scope(store, experiment).conversation_ids
    assert sorted(ids) == sorted([parent, first, second, below])  # lone: another import


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_every_format_carries_the_fork_columns_and_each_message_once(
    run_cli, family, tmp_path, fmt
):
    out = tmp_path / f"out_{fmt}"
    done = run_cli(["export", family["parent"], "--format", fmt, "-o", str(out)], env=family["env"])
    assert done.code == 0, done.err
    conversations, messages = _read(out, "conversations", fmt), _read(out, "messages", fmt)
    by_id = {r["conversation_id"]: r for r in conversations}
    parent, forks, grandchild = family["parent"], family["forks"], family["grandchild"]
    assert list(by_id) == [parent, forks[0], grandchild, forks[1]]
    for column in FORK_COLUMNS:
        assert all(column in row for row in conversations), column
    top = by_id[parent]
    assert [_empty(top[c]) for c in ("parent_id", "fork_at", "fork_group", "replay_of")] == [
        True
    ] * 4
    assert _false(top["edited"])
    one, two = by_id[forks[0]], by_id[forks[1]]
    assert (one["parent_id"], one["fork_at"], two["fork_at"]) == (parent, AT, AT)
    assert one["fork_group"] == two["fork_group"] and one["fork_group"].startswith("fork_")
    assert [int(one["fork_repetition"]), int(two["fork_repetition"])] == [1, 2]
    assert _true(one["edited"]) and _true(two["edited"])
    below = by_id[grandchild]
    assert (below["parent_id"], below["fork_at"]) == (forks[0], "1:6")
    assert _false(below["edited"]) and below["fork_group"] != one["fork_group"]
    assert top["cell_key"] != one["cell_key"] == two["cell_key"] != below["cell_key"]
    # each message once, under the conversation that stored it: a fork's start at its point
    assert len({m["message_id"] for m in messages}) == len(messages) == 8 + 4 + 4 + 2
    places = [
        (int(m["day"]), int(m["index"])) for m in messages if m["conversation_id"] == forks[0]
    ]
    assert places == [(1, 4), (1, 5), (1, 6), (1, 7)]
    edited = [m for m in messages if _true(m["edited"])]
    assert [m["conversation_id"] for m in edited] == forks
    parents_text = next(
        m["text"] for m in messages if m["conversation_id"] == parent and int(m["index"]) == 4
    )
    assert all(m["text"] == EDIT and m["original_text"] == parents_text for m in edited)
    assert all(_empty(m["original_text"]) for m in messages if not _true(m["edited"]))


def test_an_export_of_a_fork_covers_it_and_its_forks(run_cli, family, tmp_path):
    out = tmp_path / "fork"
    done = run_cli(["export", family["forks"][0], "-o", str(out), "--json"], env=family["env"])
    assert done.code == 0, done.err
    assert done.json()["scope"]["conversations"] == 2
    rows = _rows(out / "conversations.jsonl")
    assert [r["conversation_id"] for r in rows] == [family["forks"][0], family["grandchild"]]


def test_a_forks_measures_count_only_its_own_messages(run_cli, family):
    env, parent, forks = family["env"], family["parent"], family["forks"]
    measured = run_cli(["measures", parent, "--json"], env=env)
    assert measured.code == 0, measured.err
    rows = {r["conversation_id"]: r for r in measured.json()["conversations"]}
    assert rows[parent]["messages"] == 8 and rows[parent]["fork_at"] is None
    for fork in forks:
        assert (rows[fork]["messages"], rows[fork]["fork_at"]) == (4, AT)
        assert rows[fork]["parent_id"] == parent
        assert rows[fork]["calls"] == 4  # three turns and the summary: the edit is no call
    assert rows[family["grandchild"]]["messages"] == 2
    cells = measured.json()["cells"]
    assert sorted(c.get("fork_at") or "start" for c in cells) == ["1:4", "1:6", "start"]
    shown = run_cli(["measures", parent], env={**env, "COLUMNS": "250"})
    assert shown.code == 0, shown.err
    assert "from" in shown.out and "start" in shown.out and "1:4" in shown.out
    lone = run_cli(["measures", family["grandchild"]], env={**env, "COLUMNS": "250"})
    assert "from" in lone.out  # a fork alone: still measured from its point


def test_a_fork_has_no_latency_or_call_for_the_edit(family):
    store = open_store_uri(family["env"]["SIM_DB"])
    try:
        tables = load_tables(store, resolve_scope(store, family["parent"]))
    finally:
        store.close()
    fork = family["forks"][0]
    own = [m for m in tables["messages"] if m["conversation_id"] == fork]
    assert own[0]["edited"] and own[0]["latency_s"] == 0.0  # as stored: no model time
    row = next(r for r in conversation_measures(tables) if r["conversation_id"] == fork)
    timed = [m["latency_s"] for m in own[1:]]
    assert row["latency_s"] == pytest.approx(sum(timed) / len(timed))


def _read(folder, name: str, fmt: str) -> list[dict]:
    path = folder / f"{name}.{fmt}"
    if fmt == "jsonl":
        return _rows(path)
    if fmt == "csv":
        with path.open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_parquet(path)
    return [
        {k: (None if _missing(v) else v) for k, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _empty(value) -> bool:
    return value is None or value == ""


def _true(value) -> bool:  # JSON and Parquet booleans, CSV's text
    return value in (True, "True")


def _false(value) -> bool:
    return value in (False, "False")


def test_the_measures_table_has_a_from_column_only_with_forks():
    from rich.console import Console

    from simulator.cli.analysis_parts import measures_table

    plain = {"label": "ollama:a · whole run", "n": 1, "words_mean": 3.0}
    fork = {"label": "ollama:b", "n": 2, "fork_at": AT, "parent_id": "conv_1", "words_mean": 4.0}
    for cells, expected in (([plain, fork], True), ([plain], False)):
        console = Console(width=200, record=True)
        console.print(measures_table("measures", cells, ["words"]))
        text = console.export_text()
        assert ("from" in text and "start" in text and AT in text) is expected


def test_report_of_a_parent_and_of_a_fork(run_cli, family, tmp_path):
    env = family["env"]
    out = tmp_path / "parent.html"
    done = run_cli(["report", family["parent"], "-o", str(out)], env=env)
    assert done.code == 0, done.err
    assert "4 transcripts" in done.out  # the family: parent, two forks, the fork of a fork
    page = out.read_text(encoding="utf-8")
    assert 'id="branches"' in page and page.count('class="branch-node branch"') == 3
    assert page.count('class="fork-view"') == 2  # at 1:4 of the parent, at 1:6 of the fork
    out = tmp_path / "fork.html"
    done = run_cli(["report", family["grandchild"], "-o", str(out)], env=env)
    assert done.code == 0, done.err
    page = out.read_text(encoding="utf-8")
    assert "not in this scope" in page  # its parent: drawn, read, not part of the report
