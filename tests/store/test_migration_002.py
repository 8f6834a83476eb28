"""Migration 002 on a store written before it: the ledger and message fields get one meaning."""

from __future__ import annotations

from datetime import datetime

from simulator.store.migrations import current_version, migrate


def test_old_cut_at_manager_index_and_base_url_are_converted(store):
    db = store.db
    db.meta.update_one({"_id": "schema"}, {"$set": {"version": 1}}, upsert=True)
    db.conversations.insert_one(
        {
            "_id": "conv_old",
            "schema_version": 1,
            "agents": [
                {"name": "Guard_1", "role": "Guard", "model": "mock:a"},
                {"name": "Prisoner_1", "role": "Prisoner", "model": "mock:a"},
            ],
            "day_split": [3, 3],
        }
    )
    raw = "**Guard:** Stay in your cell. Prisoner: No way!"
    db.messages.insert_one(
        {"_id": "conv_old-m1", "schema_version": 1, "conversation_id": "conv_old",
         "speaker": "Guard_1", "role": "Guard", "raw_text": raw,
         "text": "Stay in your cell.", "cut_at": "Prisoner"}
    )  # fmt: skip
    base = {"schema_version": 1, "conversation_id": "conv_old", "created_at": datetime(2025, 1, 1)}
    db.calls.insert_many(
        [
            {**base, "_id": "c1", "seq": 1, "purpose": "manager_pick", "day": 2, "index": 4,
             "base_url": None, "error": None,
             "model_identity": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1"}},
            {**base, "_id": "c2", "seq": 2, "purpose": "agent_turn", "day": 2, "index": 1,
             "base_url": None, "error": "boom", "model_identity": None},
        ]
    )  # fmt: skip
    foreign = {"_id": "ref_msg", "content": "hello", "role": "Researcher", "cut_at": "x"}
    db.messages.insert_one(dict(foreign))

    assert migrate(db) == [2, 3]  # 003 follows
    assert current_version(db) == 3
    message = db.messages.find_one({"_id": "conv_old-m1"})
    assert message["cut_label"] == "Prisoner"
    assert raw[: message["cut_at"]].strip() == "**Guard:** Stay in your cell."
    pick, turn = db.calls.find_one({"_id": "c1"}), db.calls.find_one({"_id": "c2"})
    assert pick["index"] == 1  # the 5th message overall is the 2nd of day 2 (split 3, 3)
    assert pick["base_url"] == "http://127.0.0.1:9/v1" and pick["state"] == "done"
    assert turn["index"] == 1 and turn["state"] == "failed"
    assert db.messages.find_one({"_id": "ref_msg"}) == foreign  # not ours: untouched

    db.meta.update_one({"_id": "schema"}, {"$set": {"version": 1}})
    migrate(db)  # a second process opening the same old store changes nothing more
    assert db.calls.find_one({"_id": "c1"})["index"] == 1
