"""A group commit's inserts and `$set`s on the embedded store, one SQLite transaction a group.

litemongo writes through mongomock one document per SQLite transaction: it deep-copies the
document, re-validates it, encodes it, commits, and (once any query has built it) adds it to the
collection's in-memory query index; an `update_one`, even by `_id`, first builds that index over
the whole collection and then keeps every row's entry for the rest of the process. A 1,000-agent
network round wrote about 13,000 commits for 3,000 calls, and the ledger's index grew by about
3 KB a call (bench/network_round.py). Here a group of one flush (group_commit.ORDER) is written
in one transaction: each document encoded exactly as litemongo encodes it (`table._encode_doc`,
the same bytes; BSON keeps datetimes to the millisecond as mongomock's patching does), a taken
`_id` reported as mongomock reports it (False, nothing written), and an update read, changed and
re-encoded by primary key. The query index is kept in step when one was built, and never built.

Only what can be done faithfully is done here (`DirectTable` says what): inserts into litemongo
collections without a unique index other than `_id` (mongomock checks those by query), and
`$set`s of plain top-level fields, none of a unique index, on one `_id`, guarded or not by
equality on other top-level fields (a lease owner). Everything else goes through pymongo's API
as before. A failure rolls the whole group back: no op of it is stored.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from simulator.store.embedded import table_of

GUARD_TYPES = (str, int, float, bool, type(None))  # equality guards compared here as MongoDB does


@dataclass(frozen=True)
class DirectTable:
    """A litemongo collection's SQLite table, written here instead of through mongomock."""

    collection: Any
    table: Any
    unique_fields: frozenset[str]  # fields of unique indexes other than `_id`'s

    def can_insert(self) -> bool:
        """Inserts need mongomock's unique checks (by query) whenever a unique index exists."""
        return not self.unique_fields

    def can_update(self, query: dict | None, fields: dict) -> bool:
        """A `$set` of top-level fields, none of a unique index, on one `_id` guarded (or not)
        by equality on other top-level scalar fields (a lease owner)."""
        if (
            query is None
            or "_id" not in query
            or not _plain_names(query)
            or not _plain_names(fields)
        ):
            return False
        if any(not isinstance(value, GUARD_TYPES) for value in query.values()):
            return False
        return not (self.unique_fields & fields.keys())

    def raise_to(self, ids: Sequence[Any], name: str, value: Any) -> int:
        """`update_many(ours({_id: {$in: ids}, name: {$lt: value}}), {$set: {name: value}})`
        in one transaction: a field that only moves forward (a memory's last access), on this
        tool's documents only. How many rose."""
        if name in self.unique_fields or not _plain_names({name: value}):
            raise ValueError(f"{name!r} cannot be raised directly")
        return raise_field(self.collection, self.table, ids, name, value)

    def insert(self, documents: Sequence[dict]) -> list[bool]:
        return insert_documents(self.collection, self.table, documents)

    def update(self, updates: Sequence[tuple[dict, dict]]) -> list[bool]:
        return set_fields(self.collection, self.table, updates)


def direct_table(collection: Any) -> DirectTable | None:
    """The collection's table when some writes may bypass mongomock; None on a server or on
    mongomock itself, which answer through their own API."""
    table = table_of(collection)
    indexes = getattr(getattr(collection, "_store", None), "indexes", None)
    if table is None or indexes is None:
        return None
    unique = frozenset(
        field
        for name, index in indexes.items()
        if name != "_id_" and index.get("unique")
        for field, _ in index["key"]
    )
    return DirectTable(collection, table, unique)


def set_fields_one(collection: Any, query: dict, fields: dict) -> None:
    """`update_one(query, {"$set": fields})`, written directly where that is faithful: a
    conversation's status write deep-copied its whole document (a 1,000-agent network run's
    snapshot: 80 ms) through mongomock."""
    direct = direct_table(collection)
    if direct is not None and direct.can_update(query, fields):
        direct.update([(query, fields)])
    else:
        collection.update_one(query, {"$set": fields})


def insert_documents(collection: Any, table: Any, documents: Sequence[dict]) -> list[bool]:
    """Insert in one transaction; per document True, or False when its `_id` was taken."""
    for document in documents:
        _check_top_level(document)
    query_index = collection._store._query_index
    insert = f"INSERT INTO {table._table_name} VALUES (?, ?) ON CONFLICT(_id) DO NOTHING"
    outcomes: list[bool] = []
    added: list[tuple[str, dict]] = []
    connection = table._connection
    with connection:
        connection.execute("BEGIN IMMEDIATE")
        cursor = connection.cursor()
        for document in documents:
            key = table.encode_key(document["_id"])
            stored = cursor.execute(insert, (key, table._encode_doc(document))).rowcount == 1
            outcomes.append(stored)
            if stored:
                added.append((key, document))
    if query_index is not None:
        for key, document in added:
            query_index.add(key, document)
    return outcomes


def set_fields(collection: Any, table: Any, updates: Sequence[tuple[dict, dict]]) -> list[bool]:
    """Apply each (query, fields) `$set` in one transaction; True each, as `update_one`
    matching nothing (a missing `_id`, a guard that no longer holds) is not an error. The guard
    is read and the row written inside the transaction, atomically."""

    def change(i: int, document: dict) -> bool:
        query, fields = updates[i]
        if not all(_equals(document.get(name), value) for name, value in query.items()):
            return False
        document.update(fields)
        return True

    _rewrite(collection, table, [query["_id"] for query, _ in updates], change)
    return [True] * len(updates)


def raise_field(collection: Any, table: Any, ids: Sequence[Any], name: str, value: Any) -> int:
    """See `DirectTable.raise_to`."""

    def change(_: int, document: dict) -> bool:
        stored = document.get(name)
        if "schema_version" not in document:  # not ours: never written (foreign.ours)
            return False
        if stored is None or not stored < value:  # MongoDB's $lt matches no missing field
            return False
        document[name] = value
        return True

    return _rewrite(collection, table, list(dict.fromkeys(ids)), change)


def update_by_id(
    collection: Any, table: Any, doc_id: Any, change: Callable[[dict], bool]
) -> dict | None:
    """`find_one_and_update` by `_id`, written directly: `change(document)` alters it and says
    whether it matched (False: nothing written); the document after, or None. Read and written
    in one transaction, so a guard it checks holds when the write lands."""
    changed: list[dict] = []

    def apply(_: int, document: dict) -> bool:
        if not change(document):
            return False
        changed.append(copy.deepcopy(document))  # the query index keeps `document` itself
        return True

    _rewrite(collection, table, [doc_id], apply)
    return changed[0] if changed else None


def rewrite(
    collection: Any, table: Any, ids: Sequence[Any], change: Callable[[int, dict], bool]
) -> int:
    """Read each `_id`'s document, let `change(i, document)` alter it (True: write it back),
    all in one transaction; how many were written (see `_rewrite`)."""
    return _rewrite(collection, table, ids, change)


def _rewrite(
    collection: Any, table: Any, ids: Sequence[Any], change: Callable[[int, dict], bool]
) -> int:
    """Read each `_id`'s document, let `change(i, document)` alter it (True: write it back),
    all in one `BEGIN IMMEDIATE` transaction; keep a built query index in step. Missing ids
    are skipped. How many documents were written."""
    query_index = collection._store._query_index
    select = f"SELECT doc FROM {table._table_name} WHERE _id = ?"
    write = f"UPDATE {table._table_name} SET doc = ? WHERE _id = ?"
    changed: list[tuple[str, dict]] = []
    connection = table._connection
    with connection:
        connection.execute("BEGIN IMMEDIATE")
        cursor = connection.cursor()
        for i, doc_id in enumerate(ids):
            key = table.encode_key(doc_id)
            row = cursor.execute(select, (key,)).fetchone()
            if row is None:
                continue
            document = table._decode_doc(row[0])
            if change(i, document):
                cursor.execute(write, (table._encode_doc(document), key))
                changed.append((key, document))
    if query_index is not None:
        for key, document in changed:
            query_index.add(key, document)
    return len(changed)


def _equals(stored: Any, wanted: Any) -> bool:
    """MongoDB's equality on a top-level field: an array holding the value matches too."""
    if isinstance(stored, list):
        return wanted in stored or stored == wanted
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return type(stored) is type(wanted) and stored == wanted
    return stored == wanted


def _plain_names(fields: dict) -> bool:
    return all(isinstance(k, str) and not k.startswith("$") and "." not in k for k in fields)


def _check_top_level(document: dict) -> None:
    """mongomock's own refusal, kept: a top-level name starting with `$` (BSON refuses NULs)."""
    for key in document:
        if not isinstance(key, str) or key.startswith("$"):
            raise ValueError(f"invalid top-level field name {key!r}")
