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

import heapq
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from simulator.store.bson_fields import top_fields

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


def matching(
    table: Any, needle: str | bytes | tuple[str | bytes, ...], keep: Callable[[dict], bool]
) -> Iterator[dict]:
    """Every document for which `keep` is true, in natural (insertion) order, one at a time.

    `needle`: a text (or several) every kept document holds (the id it is filtered on, a
    `string_element`); documents whose stored bytes lack one are skipped without being
    decoded. `keep` still decides: a needle only saves decoding."""
    needles = [n.encode("utf-8") if isinstance(n, str) else n for n in _as_tuple(needle)]
    query = f"SELECT doc FROM {table._table_name} ORDER BY ROWID"
    for (raw,) in table._connection.execute(query):
        if all(n in raw for n in needles):
            doc = table._decode_doc(raw)
            if keep(doc):
                yield doc


def count_ours(table: Any) -> tuple[int, int]:
    """How many documents this tool wrote and how many it did not (no top-level
    `schema_version`), reading only each document's first fields (it is the second or third
    of ours): 0.7 s at 100,000 conversations, against 10 s through the query index."""
    mark = OURS_FIELD.encode()
    names, options = frozenset({mark}), table._codec_options
    ours = foreign = 0
    for (raw,) in table._connection.execute(f"SELECT doc FROM {table._table_name}"):
        if mark not in raw:
            foreign += 1
            continue
        fields = top_fields(raw, names, options)
        if fields is None:  # an element type the walk does not know: decode it all
            fields = table._decode_doc(raw)
        if OURS_FIELD in fields:
            ours += 1
        else:
            foreign += 1
    return ours, foreign


def _as_tuple(needle: str | bytes | tuple[str | bytes, ...]) -> tuple[str | bytes, ...]:
    return needle if isinstance(needle, tuple) else (needle,)


def string_element(key: str, value: str) -> bytes:
    """The BSON bytes of `key: value` (a string field), as the stored document holds them: a
    needle that skips, undecoded, every document without that field value."""
    data = value.encode("utf-8")
    return (
        b"\x02" + key.encode("utf-8") + b"\x00" + struct.pack("<i", len(data) + 1) + data + b"\x00"
    )


def newest(
    table: Any,
    needle: str,
    keep: Callable[[dict], bool],
    key: Callable[[dict], Any],
    limit: int | None,
) -> tuple[list[Any], int]:
    """The ids of the `limit` kept documents with the largest (`key(doc)`, `_id`) (None: all),
    largest first, and how many were kept: one pass holding (key, id) pairs, never the
    documents."""
    pairs = [(key(doc), doc["_id"]) for doc in matching(table, needle, keep)]
    top = sorted(pairs, reverse=True) if limit is None else heapq.nlargest(limit, pairs)
    return [doc_id for _, doc_id in top], len(pairs)


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
