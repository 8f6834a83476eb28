"""Numbered schema migrations, applied in order at open and recorded in the `meta` collection.

Rule for new ones: append a function, never edit or reorder an applied one. Each must be
idempotent (two processes may open an old store at the same moment).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
SCHEMA_VERSION = 3
META_ID = "schema"
# What this tool's ids looked like before documents carried schema_version. Anything else in
# these collections (the reference tool's ObjectIds, above all) is another tool's.
_OUR_IDS: dict[str, Callable[[Any], bool]] = {
    "users": lambda i: isinstance(i, str),  # a user's name
    "favourites": lambda i: isinstance(i, str) and i.count("|") == 2,  # user|kind|target
    "experiments": lambda i: isinstance(i, str) and i.startswith("exp_"),
    "conversations": lambda i: isinstance(i, str) and i.startswith("conv_"),
    "messages": lambda i: isinstance(i, str) and i.startswith("conv_"),
    "calls": lambda i: isinstance(i, str) and i.startswith(("conv_", "call_")),
}


def _m001_initial(db: Any) -> None:
    """Version 1: the first schema; documents written before it carried no schema_version.

    Narrowed after the fact: it stamps only documents whose id this tool could have
    written, never another tool's sharing the collection. Stores already at version 1 or later
    never run it again; 003 undoes what the broad version did to the reference tool's documents.
    """
    for name, is_ours in _OUR_IDS.items():
        unmarked = db[name].find({"schema_version": {"$exists": False}}, {"_id": 1})
        ids = [doc["_id"] for doc in unmarked if is_ours(doc["_id"])]
        for start in range(0, len(ids), 500):
            db[name].update_many(
                {"_id": {"$in": ids[start : start + 500]}, "schema_version": {"$exists": False}},
                {"$set": {"schema_version": 1}},
            )


def _m002_ledger_fields_mean_one_thing(db: Any) -> None:
    """Version 2: `cut_at` is a character index (the tag moves to `cut_label`); a manager pick's
    ledger `index` counts within the day like every other call; `base_url` is the endpoint
    called; ledger rows carry `state`. Only rows this tool wrote (with `schema_version`) change;
    rows already converted (they carry `state` / an int `cut_at`) are skipped, so it is safe to
    run twice."""
    from simulator.prompting.bleed import trim_reply

    conversations = {}
    for conv in db.conversations.find(
        {"schema_version": {"$exists": True}}, {"agents": 1, "day_split": 1}
    ):
        conversations[conv["_id"]] = conv
    for msg in db.messages.find({"schema_version": {"$exists": True}, "cut_at": {"$ne": None}}):
        if not isinstance(msg.get("cut_at"), str):
            continue
        agents = (conversations.get(msg.get("conversation_id")) or {}).get("agents") or []
        others = [a["name"] for a in agents if a.get("name") != msg.get("speaker")]
        roles = sorted({a["role"] for a in agents if a.get("role") != msg.get("role")})
        redone = trim_reply(
            msg.get("raw_text") or "", msg.get("speaker", ""), msg.get("role", ""), others, roles
        )
        db.messages.update_one(
            {"_id": msg["_id"]},
            {"$set": {"cut_at": redone.cut_at, "cut_label": redone.cut_label or msg["cut_at"]}},
        )
    for call in db.calls.find({"schema_version": {"$exists": True}, "state": {"$exists": False}}):
        change: dict[str, Any] = {"state": "failed" if call.get("error") else "done"}
        if call.get("purpose") == "manager_pick":
            split = (conversations.get(call.get("conversation_id")) or {}).get("day_split") or []
            before = sum(split[: max(0, int(call.get("day") or 1) - 1)])
            change["index"] = max(0, int(call.get("index") or 0) - before)
        identity = call.get("model_identity") or {}
        if not call.get("base_url") and isinstance(identity, dict):
            change["base_url"] = identity.get("base_url") or identity.get("host")
        db.calls.update_one({"_id": call["_id"]}, {"$set": change})


# The shapes of the reference tool's documents (its `to_document` methods): a document with an
# ObjectId and these fields that carries `schema_version: 1` got it from the broad 001.
_REFERENCE_SHAPES = {
    "experiments": ("creator", "creation_date", "conversation_ids"),
    "conversations": ("agent_combination", "messages_ids", "n_messages"),
    "messages": ("content", "speaker", "day"),
}


def _m003_leave_other_tools_documents_alone(db: Any) -> None:
    """Version 3: the unique `key` indexes of conversations and sweeps become sparse, so other
    tools' documents (the reference tool's conversations have no `key`) neither collide nor
    block the index; the `schema_version: 1` that the broad 001 wrote into the reference
    tool's documents is taken out again (restoring them byte for byte); and this tool's
    conversations record what they ran with where a default changed: `allow_repeat_speaker:
    true` for `auto` and `manual` speakers (the default became False) and
    `agents_know_their_names: false` (system prompts now say the agent's name), so a resumed
    conversation goes on as it began. Safe to run twice or at once."""
    from simulator.store.indexes import drop_non_sparse, ensure_sparse_unique

    for collection in (db.conversations, db.sweeps):
        drop_non_sparse(collection, "key")
        ensure_sparse_unique(collection, "key")
    for name, fields in _REFERENCE_SHAPES.items():
        shaped = {"schema_version": 1, **{f: {"$exists": True} for f in fields}}
        ids = [
            doc["_id"]
            for doc in db[name].find(shaped, {"_id": 1})
            if not isinstance(doc["_id"], str)  # this tool's ids are strings
        ]
        for start in range(0, len(ids), 500):
            db[name].update_many(
                {"_id": {"$in": ids[start : start + 500]}, "schema_version": 1},
                {"$unset": {"schema_version": ""}},
            )
    before = {
        "schema_version": {"$exists": True},
        "spec.agents_know_their_names": {"$exists": False},
    }
    for conv in db.conversations.find(before, {"spec": 1}):
        if not isinstance(conv.get("spec"), dict):
            continue
        spec = {**conv["spec"], "agents_know_their_names": False}  # their prompts had no name line
        if spec.get("speaker_method") in ("auto", "manual"):
            spec.setdefault("allow_repeat_speaker", True)
        # the whole spec, not `spec.x`: nx-27017 stores a $set boolean as 1
        db.conversations.update_one({"_id": conv["_id"], **before}, {"$set": {"spec": spec}})


MIGRATIONS: list[tuple[int, Callable[[Any], None]]] = [
    (1, _m001_initial),
    (2, _m002_ledger_fields_mean_one_thing),
    (3, _m003_leave_other_tools_documents_alone),
]


def current_version(db: Any) -> int:
    doc = db.meta.find_one({"_id": META_ID})
    return int(doc["version"]) if doc else 0


def migrate(db: Any) -> list[int]:
    """Apply every migration newer than the store's version; return the numbers applied."""
    applied = []
    version = current_version(db)
    for number, migration in MIGRATIONS:
        if number <= version:
            continue
        log.info("applying schema migration %03d (%s)", number, migration.__doc__ or "")
        migration(db)
        db.meta.update_one({"_id": META_ID}, {"$set": {"version": number}}, upsert=True)
        applied.append(number)
    return applied
