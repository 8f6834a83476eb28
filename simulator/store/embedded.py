"""Reads straight from the embedded store's SQLite tables, for scopes of 100,000 conversations.

litemongo answers every query other than a lookup by `_id` through an in-memory index of every
document of the collection, built on the first query and kept: about 4 KB per conversation and
1.7 KB per message (400 MB at 100,000 conversations, 3.5 GB at 2 million messages), and a sort
deep-copies every document it sees. Export and measures read their rows here instead: by `_id`
range (a conversation's messages, calls and summaries have ids that start with its id), by
`_id` list, or in one pass over the table that keeps only what matches. None of it applies to
MongoDB servers or mongomock (`table_of` gives None there), which answer the queries as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

OURS_FIELD = "schema_version"  # what `foreign.ours()` asks for: documents this tool wrote


def table_of(collection: Any) -> Any | None:
    """litemongo's SQLite table behind `collection`; None on MongoDB and mongomock."""
    table = getattr(getattr(collection, "_store", None), "_documents", None)
    needed = ("_connection", "_table_name", "encode_key", "_decode_doc", "get_many")
    return table if all(hasattr(table, name) for name in needed) else None


def id_range(table: Any, low: str, high: str) -> Iterator[dict]:
    """Documents whose string `_id` is in [low, high), through the table's primary key."""
    query = f"SELECT doc FROM {table._table_name} WHERE _id >= ? AND _id < ? ORDER BY _id"
    for (raw,) in table._connection.execute(query, (table.encode_key(low), table.encode_key(high))):
        yield table._decode_doc(raw)


def has_id_prefix(table: Any, prefix: str) -> bool:
    """Whether any string `_id` starts with `prefix` (one primary-key probe)."""
    query = f"SELECT 1 FROM {table._table_name} WHERE _id >= ? AND _id < ? LIMIT 1"
    low, high = table.encode_key(prefix), table.encode_key(prefix + "\U0010ffff")
    return table._connection.execute(query, (low, high)).fetchone() is not None


def by_ids(table: Any, ids: Iterable[Any]) -> Iterator[dict]:
    """The documents with these ids, in the order given, missing ones skipped."""
    return table.get_many(list(ids))


def matching(table: Any, needle: str, keep: Callable[[dict], bool]) -> Iterator[dict]:
    """Every document for which `keep` is true, in natural (insertion) order, one at a time.

    `needle`: a text every kept document holds (the id it is filtered on); documents whose
    stored bytes lack it are skipped without being decoded."""
    raw_needle = needle.encode("utf-8")
    query = f"SELECT doc FROM {table._table_name} ORDER BY ROWID"
    for (raw,) in table._connection.execute(query):
        if raw_needle in raw:
            doc = table._decode_doc(raw)
            if keep(doc):
                yield doc


def sort_key(value: Any) -> tuple:
    """A sort key placing missing values (None) first, as MongoDB's sort does."""
    return (value is not None, value)


def ids_sorted(
    table: Any, needle: str, keep: Callable[[dict], bool], field: str, descending: bool = False
) -> list[Any]:
    """The ids of the documents `keep` takes, ordered as `find(...).sort(field, ±1)` orders
    them (a stable sort over natural order), holding only (value, id) pairs."""
    found = [(doc.get(field), doc["_id"]) for doc in matching(table, needle, keep)]
    found.sort(key=lambda pair: sort_key(pair[0]), reverse=descending)
    return [doc_id for _, doc_id in found]
