"""Numbered schema migrations, applied in order at open and recorded in the `meta` collection.

Rule for new ones: append a function, never edit or reorder an applied one. Each must be
idempotent (two processes may open an old store at the same moment).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
SCHEMA_VERSION = 1
META_ID = "schema"


def _m001_initial(db: Any) -> None:
    """Version 1: the first schema; documents written before it carried no schema_version."""
    for name in ("users", "experiments", "favourites", "conversations", "messages", "calls"):
        db[name].update_many(
            {"schema_version": {"$exists": False}}, {"$set": {"schema_version": 1}}
        )


MIGRATIONS: list[tuple[int, Callable[[Any], None]]] = [(1, _m001_initial)]


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
