"""Messages, inserted the moment they exist, with ids that make a re-insert harmless."""

from __future__ import annotations

from typing import Any

from simulator.store.batched import BatchReader
from simulator.store.counting import count
from simulator.store.foreign import ours
from simulator.store.indexes import ensure_marker_index

SCHEMA_VERSION = 1


def message_id(conversation_id: str, day: int, index: int) -> str:
    return f"{conversation_id}-d{day:03d}-m{index:05d}"


class MessagesRepository:
    def __init__(self, db: Any):
        self._col = db.messages
        self._batched = BatchReader(self._col)  # a batch's messages in one query, or per id

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), ("seq", 1)])
        ensure_marker_index(self._col)

    @staticmethod
    def document(doc: dict) -> dict:
        """The stored form of a message: its id says where it belongs, so a re-insert clashes."""
        doc = {"schema_version": SCHEMA_VERSION, **doc}
        doc["_id"] = message_id(doc["conversation_id"], doc["day"], doc["index"])
        return doc

    def insert(self, doc: dict) -> bool:
        """Insert one message; False if that (conversation, day, index) was already stored."""
        from pymongo.errors import DuplicateKeyError

        try:
            self._col.insert_one(self.document(doc))
            return True
        except DuplicateKeyError:
            return False

    def insert_all(self, docs: list[dict]) -> None:
        """Insert a whole transcript in one write (an import's); a message already stored is
        left as it is."""
        from pymongo.errors import BulkWriteError

        if not docs:
            return
        try:
            self._col.insert_many([self.document(doc) for doc in docs], ordered=False)
        except BulkWriteError as exc:
            if any(e.get("code") != 11000 for e in exc.details.get("writeErrors", [])):
                raise

    def get(self, conversation_id: str, day: int, index: int) -> dict | None:
        """One stored message by its place (an `_id` lookup), or None."""
        return self._col.find_one(ours({"_id": message_id(conversation_id, day, index)}))

    def for_conversation(self, conversation_id: str) -> list[dict]:
        return list(self._col.find(ours({"conversation_id": conversation_id})).sort("seq", 1))

    def for_conversations(self, conversation_ids: list[str]) -> dict[str, list[dict]]:
        """The messages of a batch of conversations, each list in `seq` order: one query per
        batch (what costs over TCP; per conversation where the server would scan for it, see
        batched.py), never the whole collection.

        The embedded store answers any query through an in-memory index of every document of
        the collection (about 1.7 KB per message: 3.5 GB at 2 million), so there each
        conversation's messages are read by their id range instead (message ids start with the
        conversation id, see `message_id`), straight from its table."""
        return self._batched.grouped(conversation_ids, "seq")

    def count(self, conversation_id: str) -> int:
        return count(self._col, ours({"conversation_id": conversation_id}))

    def delete_for(self, conversation_id: str) -> None:
        self._col.delete_many(ours({"conversation_id": conversation_id}))
