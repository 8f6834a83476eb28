"""Messages, inserted the moment they exist, with ids that make a re-insert harmless."""

from __future__ import annotations

from typing import Any

from pymongo.errors import DuplicateKeyError

from simulator.store.foreign import ours

SCHEMA_VERSION = 1


def message_id(conversation_id: str, day: int, index: int) -> str:
    return f"{conversation_id}-d{day:03d}-m{index:05d}"


class MessagesRepository:
    def __init__(self, db: Any):
        self._col = db.messages

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), ("seq", 1)])

    def insert(self, doc: dict) -> bool:
        """Insert one message; False if that (conversation, day, index) was already stored."""
        doc = {"schema_version": SCHEMA_VERSION, **doc}
        doc["_id"] = message_id(doc["conversation_id"], doc["day"], doc["index"])
        try:
            self._col.insert_one(doc)
            return True
        except DuplicateKeyError:
            return False

    def for_conversation(self, conversation_id: str) -> list[dict]:
        return list(self._col.find(ours({"conversation_id": conversation_id})).sort("seq", 1))

    def count(self, conversation_id: str) -> int:
        return self._col.count_documents(ours({"conversation_id": conversation_id}))

    def delete_for(self, conversation_id: str) -> None:
        self._col.delete_many(ours({"conversation_id": conversation_id}))
