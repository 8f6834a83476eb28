"""Counting documents the fast way for each kind of store.

pymongo's `count_documents` sends `$match` + `$group: {_id: 1, n: {$sum: 1}}`. MongoDB answers
a `$count` stage the same way (same semantics), but nx-27017 (the MongoDB wire protocol over
SQLite) answers `$count` from SQL while it evaluates that `$group` in Python: 2.9 s against 4 ms
at 10,000 conversations. The embedded store (litemongo, mongomock) evaluates both in Python and
its aggregation copies every document first, so there `count_documents` stays.
"""

from __future__ import annotations

from typing import Any


def is_server_collection(collection: Any) -> bool:
    """A collection behind a MongoDB server (real, or anything speaking its wire protocol)."""
    from pymongo.collection import Collection  # loaded already: a store is open

    return isinstance(collection, Collection)


def count(collection: Any, query: dict) -> int:
    """How many documents of `collection` match `query`."""
    if not is_server_collection(collection):
        return collection.count_documents(query)
    rows = list(collection.aggregate([{"$match": query}, {"$count": "n"}]))
    return int(rows[0]["n"]) if rows else 0


def count_by(collection: Any, query: dict, field: str) -> dict[Any, int]:
    """How many documents matching `query` hold each value of top-level `field` (one pass)."""
    rows = collection.aggregate(
        [{"$match": query}, {"$group": {"_id": f"${field}", "n": {"$sum": 1}}}]
    )
    return {row["_id"]: int(row["n"]) for row in rows}
