"""The reference tool's database, read for an import: only `find`, `count_documents` and the
collection listing, so nothing there is ever created or changed.

The import service converts what this returns; it never touches the source's collections
itself (the store is the only code that talks to a database).
"""

from __future__ import annotations

from typing import Any

from simulator.store.counting import count
from simulator.store.database import Connection
from simulator.store.foreign import NOT_OURS


class ReferenceSource:
    """The reference tool's documents (those without `schema_version`) in one database."""

    def __init__(self, connection: Connection):
        self._db = connection.db
        self.location = connection.location  # safe to show: credentials redacted
        self._collections: set[str] | None = None

    def collections(self) -> set[str]:
        """The collections that exist: one that is not there is never touched."""
        if self._collections is None:
            self._collections = set(self._db.list_collection_names())
        return self._collections

    def experiments(self) -> list[dict]:
        return self._find("experiments")

    def conversations(self) -> list[dict]:
        return self._find("conversations")

    def messages(self, ids: list[Any]) -> list[dict]:
        """The messages with these `_id`s (the ObjectIds a conversation lists), any order."""
        if not ids or "messages" not in self.collections():
            return []
        return list(self._db.messages.find({"_id": {"$in": list(ids)}}))

    def message_count(self) -> int:
        """How many reference messages the database holds (0 without a messages collection)."""
        if "messages" not in self.collections():
            return 0
        return count(self._db.messages, NOT_OURS)

    def _find(self, name: str) -> list[dict]:
        return list(self._db[name].find(NOT_OURS)) if name in self.collections() else []
