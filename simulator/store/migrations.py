"""Numbered schema migrations, applied in order at open and recorded in the `meta` collection.

Rule for new ones: append a function, never edit or reorder an applied one. Each must be
idempotent (two processes may open an old store at the same moment).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
SCHEMA_VERSION = 2
META_ID = "schema"


def _m001_initial(db: Any) -> None:
    """Version 1: the first schema; documents written before it carried no schema_version."""
    for name in ("users", "experiments", "favourites", "conversations", "messages", "calls"):
        db[name].update_many(
            {"schema_version": {"$exists": False}}, {"$set": {"schema_version": 1}}
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


MIGRATIONS: list[tuple[int, Callable[[Any], None]]] = [
    (1, _m001_initial),
    (2, _m002_ledger_fields_mean_one_thing),
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
