"""The store keeps a world registered from outside simulator/ (tests/market_world) as it keeps
the shipped ones: its rows in its own collection, counted and deleted with their run, and
written with a step's other writes in the group commit's order."""

from __future__ import annotations

from simulator.store import cascade, group_commit


def _row(run_id: str, round_: int, agent: int) -> dict:
    return {"conversation_id": run_id, "round": round_, "agent_index": agent, "offer": 50.0}


def test_a_registered_worlds_rows_are_stored_counted_and_deleted(toy_worlds, embedded):
    rows = embedded.rows("market_rounds")
    assert embedded.rows("market_rounds") is rows  # opened once
    run = embedded.conversations.create({"kind": "market", "owner": "alice", "spec": {}})
    for doc in (_row(run["_id"], 1, 0), _row(run["_id"], 1, 1)):
        embedded.db.market_rounds.insert_one(rows.document(doc))
    assert [r["_id"] for r in rows.for_run(run["_id"])] == [
        f"{run['_id']}-r00001-a00000",
        f"{run['_id']}-r00001-a00001",
    ]
    counted = cascade.count_conversation(embedded.db, run["_id"])
    assert counted.world_rows == {"market_rounds": 2}
    assert "2 market round rows" in counted.phrase()
    cascade.delete_conversation(embedded.db, run["_id"])
    assert rows.for_run(run["_id"]) == []


def test_a_worlds_row_inserts_go_with_the_other_worlds_rows():
    ranks = {key: group_commit._rank(key) for key in group_commit.ORDER}
    market = group_commit._rank(("market_rounds", "insert"))
    assert ranks[("messages", "insert")] < market < ranks[("summaries", "insert")]
    assert market < ranks[("conversations", "update")]
