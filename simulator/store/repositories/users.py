"""Users and their favourites. A user is a name; no password is ever stored."""

from __future__ import annotations

import contextlib
from typing import Any

from simulator.domain.clock import now
from simulator.store.foreign import ours

SCHEMA_VERSION = 1


class UsersRepository:
    def __init__(self, db: Any):
        self._users = db.users
        self._favourites = db.favourites

    def ensure_indexes(self) -> None:
        self._favourites.create_index([("user", 1), ("kind", 1)])

    def ensure(self, name: str) -> None:
        """Record a user the first time they act; later calls change nothing."""
        from pymongo.errors import DuplicateKeyError

        with contextlib.suppress(DuplicateKeyError):
            self._users.insert_one(
                {"_id": name, "created_at": now(), "schema_version": SCHEMA_VERSION}
            )

    def list(self) -> list[dict]:
        return list(self._users.find(ours()).sort("_id", 1))

    def set_favourite(self, user: str, kind: str, target_id: str, favourite: bool) -> None:
        from pymongo.errors import DuplicateKeyError

        key = f"{user}|{kind}|{target_id}"
        if favourite:
            doc = {
                "_id": key,
                "user": user,
                "kind": kind,
                "target": target_id,
                "created_at": now(),
                "schema_version": SCHEMA_VERSION,
            }
            with contextlib.suppress(DuplicateKeyError):
                self._favourites.insert_one(doc)
        else:
            self._favourites.delete_one({"_id": key})

    def favourites(self, user: str, kind: str) -> set[str]:
        query = ours({"user": user, "kind": kind})
        return {d["target"] for d in self._favourites.find(query)}

    def is_favourite(self, user: str, kind: str, target_id: str) -> bool:
        return self._favourites.find_one({"_id": f"{user}|{kind}|{target_id}"}) is not None

    def forget_target(self, kind: str, target_id: str) -> None:
        self._favourites.delete_many(ours({"kind": kind, "target": target_id}))
