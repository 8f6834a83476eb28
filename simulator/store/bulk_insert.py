"""Inserting many new documents at once (a sweep's conversations), keyed by a unique field.

`insert_new(collection, docs, "key", new_id)` stores each document whose key is not stored yet
and returns how many it stored. Documents are consumed a batch at a time (a generator of 100,000
is never held as a list), and a document whose random `_id` is taken gets a fresh one:
conversation ids have 32 bits, so a sweep of 100,000 holds a colliding pair more often than not.

On the embedded store every document of the call is stored in one transaction, all or none
(store/bulk_embedded.py). MongoDB servers and mongomock get `insert_many` in batches, unordered:
a duplicate key is skipped (another creator stored it), a duplicate `_id` retried with another.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from simulator.store.embedded import table_of

BATCH = 1000  # documents per insert_many / per check of keys
DUPLICATE = 11000  # MongoDB's duplicate-key error code
ID_TRIES = 8


def insert_new(
    collection: Any, docs: Iterable[dict], unique: str, new_id: Callable[[], str]
) -> int:
    """Insert the documents whose `unique` value is not stored yet; return how many were.
    `new_id()` gives a replacement `_id` when a document's own is taken."""
    table = table_of(collection)
    if table is not None:
        from simulator.store.bulk_embedded import insert_all_or_none

        return insert_all_or_none(collection, table, docs, unique, new_id)
    return sum(_insert_batch(collection, batch, unique, new_id) for batch in batches(docs))


def batches(docs: Iterable[dict]) -> Iterator[list[dict]]:
    iterator = iter(docs)
    while batch := list(itertools.islice(iterator, BATCH)):
        yield batch


def first_of_each(docs: list[dict], unique: str) -> list[dict]:
    """The documents in order, less any whose `unique` value an earlier one holds."""
    seen: set[Any] = set()
    kept = []
    for doc in docs:
        if doc[unique] not in seen:
            seen.add(doc[unique])
            kept.append(doc)
    return kept


def stored_values(collection: Any, field: str, values: list[Any]) -> set[Any]:
    """Which of `values` some document of `collection` holds in `field`."""
    found: set[Any] = set()
    for start in range(0, len(values), 500):
        chunk = values[start : start + 500]
        found.update(d[field] for d in collection.find({field: {"$in": chunk}}, {field: 1}))
    return found


def _insert_batch(
    collection: Any, batch: list[dict], unique: str, new_id: Callable[[], str]
) -> int:
    """insert_many, unordered; a duplicate whose key is now stored is skipped (another creator
    stored it), any other duplicate is an `_id` collision and is retried with a new `_id`."""
    from pymongo.errors import BulkWriteError

    fresh = first_of_each(batch, unique)
    added = 0
    for _ in range(ID_TRIES):
        if not fresh:
            return added
        try:
            collection.insert_many(fresh, ordered=False)
            return added + len(fresh)
        except BulkWriteError as exc:
            errors = exc.details.get("writeErrors", [])
            if not errors or any(e.get("code") != DUPLICATE for e in errors):
                raise
            failed = [fresh[e["index"]] for e in errors]
            added += len(fresh) - len(failed)
        taken = stored_values(collection, unique, [d[unique] for d in failed])
        fresh = [{**d, "_id": new_id()} for d in failed if d[unique] not in taken]
    raise RuntimeError(f"could not allocate unique ids for {len(fresh)} document(s)")
