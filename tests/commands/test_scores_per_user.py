"""Scores carry who scored: one user's scores never make another user's scoring skip, a user's own
re-run skips what they scored, and exports and measures say whose scores they are."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec

SCORER = """
def words(message):
    return {"words": len(message["text"].split())}
"""


@pytest.fixture
def scored_sweep(tmp_path, prison_path) -> dict:
    """A finished two-conversation sweep of alice's, messages stored directly, and a scorer file."""
    db = str(tmp_path / "store")
    store = open_store_uri(db)
    try:
        view = exp_service.import_yaml(store, prison_path, "alice")
        spec = SweepSpec(
            total_messages=4, days=1, agents={"Guard": 1, "Prisoner": 1}, llms=["mock:a"],
            repetitions=2,
        )  # fmt: skip
        sweep, _ = sweep_service.create(store, view, spec, "alice")
        for conv in store.sweeps.conversations(sweep["_id"]):
            for seq in range(4):
                store.messages.insert(_message(conv["_id"], seq, "one two " * (seq + 1)))
            store.db.conversations.update_one({"_id": conv["_id"]}, {"$set": {"status": "done"}})
    finally:
        store.close()
    scorer = tmp_path / "measures_file.py"
    scorer.write_text(SCORER, encoding="utf-8")
    return {"db": db, "sweep": sweep["_id"], "spec": f"python:{scorer}:words"}


def _message(conversation_id: str, seq: int, text: str) -> dict:
    role = "Guard" if seq % 2 == 0 else "Prisoner"
    return {
        "conversation_id": conversation_id, "day": 1, "index": seq, "seq": seq,
        "speaker": f"{role}_1", "role": role, "model": "mock:a", "text": text,
        "raw_text": text, "trimmed": False, "empty": False,
    }  # fmt: skip


def score(sim, data: dict, user: str) -> dict:
    result = sim(
        "score", data["sweep"], "--scorer", data["spec"], "--json", db=data["db"], user=user
    )
    assert result.code == 0, result.err
    return result.json()


def test_another_users_scores_never_make_scoring_skip(sim, scored_sweep):
    alice = score(sim, scored_sweep, "alice")
    assert (alice["scored"], alice["skipped"], alice["scored_by"]) == (8, 0, "alice")
    bob = score(sim, scored_sweep, "bob")
    assert (bob["scored"], bob["skipped"], bob["scored_by"]) == (8, 0, "bob")
    again = score(sim, scored_sweep, "alice")
    assert (again["scored"], again["skipped"]) == (0, 8)  # her own re-run still resumes

    store = open_store_uri(scored_sweep["db"])
    try:
        docs = list(store.db.scores.find({}))
    finally:
        store.close()
    assert len(docs) == 16
    assert sorted({d["scored_by"] for d in docs}) == ["alice", "bob"]


def test_legacy_scores_without_a_user_skip_nobody(sim, scored_sweep):
    store = open_store_uri(scored_sweep["db"])
    try:
        conversations = store.sweeps.conversations(scored_sweep["sweep"])
        scorer = "python:measures_file:words"  # a file's scorer key: python:FILE_STEM:function
        for conv in conversations:
            for message in store.messages.for_conversation(conv["_id"]):
                store.db.scores.insert_one(
                    {
                        "_id": f"{scorer}|message|{message['_id']}",  # the id before users
                        "schema_version": 1,
                        "scorer": scorer,
                        "target_kind": "message",
                        "target_id": message["_id"],
                        "conversation_id": conv["_id"],
                        "values": {"words": 99},
                    }
                )
    finally:
        store.close()
    alice = score(sim, scored_sweep, "alice")
    assert (alice["scored"], alice["skipped"]) == (8, 0)


def test_exports_and_measures_show_whose_scores(sim, scored_sweep, tmp_path):
    score(sim, scored_sweep, "alice")
    one_user = sim("measures", scored_sweep["sweep"], "--json", db=scored_sweep["db"]).json()
    row = one_user["conversations"][0]
    assert "score_python:measures_file:words_words" in row
    assert not any("_by_" in k for k in row)  # one user: the columns stay as they were

    score(sim, scored_sweep, "bob")
    out = tmp_path / "export"
    exported = sim(
        "export", scored_sweep["sweep"], "--format", "csv", "-o", str(out), "--json",
        db=scored_sweep["db"],
    )  # fmt: skip
    assert exported.code == 0, exported.err
    path = next(Path(f["path"]) for f in exported.json()["files"] if f["table"] == "scores")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["scored_by"] for r in rows} == {"alice", "bob"}

    two_users = sim("measures", scored_sweep["sweep"], "--json", db=scored_sweep["db"]).json()
    row = two_users["conversations"][0]
    base = "score_python:measures_file:words_words"
    assert row[f"{base}_by_alice"] == row[f"{base}_by_bob"] == row[base]
    assert json.dumps(two_users)  # still plain JSON
