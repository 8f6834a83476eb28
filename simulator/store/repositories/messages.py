"""Messages, inserted the moment they exist, with ids that make a re-insert harmless."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pymongo.errors import DuplicateKeyError

from simulator.store.counting import count
from simulator.store.foreign import ours
from simulator.store.indexes import ensure_marker_index

SCHEMA_VERSION = 1


def message_id(conversation_id: str, day: int, index: int) -> str:
    return f"{conversation_id}-d{day:03d}-m{index:05d}"


class MessagesRepository:
    def __init__(self, db: Any):
        self._col = db.messages

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), ("seq", 1)])
        ensure_marker_index(self._col)

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

    def for_conversations(self, conversation_ids: list[str]) -> dict[str, list[dict]]:
        """The messages of a batch of conversations, each list in `seq` order: one query per
        batch (what costs over TCP), never the whole collection.

        The embedded store answers any query through an in-memory index of every document of
        the collection (about 1.7 KB per message: 3.5 GB at 2 million), so there each
        conversation's messages are read by their id range instead (message ids start with the
        conversation id, see `message_id`), straight from its table."""
        found: dict[str, list[dict]] = {cid: [] for cid in conversation_ids}
        table = _embedded_table(self._col)
        if table is not None:
            for cid in conversation_ids:
                found[cid] = [
                    doc
                    for doc in _id_range(table, f"{cid}-", f"{cid}.")  # "." follows "-"
                    if doc.get("conversation_id") == cid and "schema_version" in doc
                ]
        else:
            for start in range(0, len(conversation_ids), 500):
                chunk = conversation_ids[start : start + 500]
                for doc in self._col.find(ours({"conversation_id": {"$in": chunk}})):
                    found[doc["conversation_id"]].append(doc)
        for docs in found.values():  # stable: ties keep the store's order, like .sort("seq")
            docs.sort(key=lambda d: (d.get("seq") is not None, d.get("seq") or 0))
        return found

    def count(self, conversation_id: str) -> int:
        return count(self._col, ours({"conversation_id": conversation_id}))

    def delete_for(self, conversation_id: str) -> None:
        self._col.delete_many(ours({"conversation_id": conversation_id}))


def _embedded_table(collection: Any) -> Any | None:
    """litemongo's SQLite table behind `collection`; None on MongoDB and mongomock."""
    table = getattr(getattr(collection, "_store", None), "_documents", None)
    needed = ("_connection", "_table_name", "encode_key", "_decode_doc")
    return table if all(hasattr(table, name) for name in needed) else None


def _id_range(table: Any, low: str, high: str) -> Iterator[dict]:
    """Documents whose string `_id` is in [low, high), through the table's primary key."""
    query = f"SELECT doc FROM {table._table_name} WHERE _id >= ? AND _id < ? ORDER BY _id"
    for (raw,) in table._connection.execute(query, (table.encode_key(low), table.encode_key(high))):
        yield table._decode_doc(raw)
