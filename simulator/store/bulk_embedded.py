"""Many new documents into the embedded store (litemongo) in one transaction: all or none.

litemongo inserts through mongomock one document per SQLite transaction, re-encoding,
re-validating and re-reading each one: 0.7 ms a document, 68 s for a sweep of 100,000. Here the
documents are encoded as litemongo encodes them (`table._encode_doc`, so the stored bytes are
the same) into a private temporary SQLite database attached to the collection's connection;
then one short write transaction re-checks keys and ids and copies the rows into the table.
A failure, or a killed process, at any point before that commit stores nothing.

Staging keeps the write lock of the collection's file short (about 2 s for 100,000 rows and
30 s or more for 1,000,000, rather than also the time of building and encoding them), so
another process writing to the same store (a sweep worker) waits less (it waits up to
conversation_rows.WRITE_WAIT_MS); and memory stays flat (the rows wait on disk, not in a list).
The conversations' rows are staged in a table of their own, so copying them and summing their
counts does not read the documents again. A log line gives the breakdown (staging, then the
write lock: documents, rows, commit); bench/sweep_create.py prints it.

Rows are copied in the order given, which is the collection's natural order afterwards, as
with insert_many. litemongo's in-memory query index does not see rows written beside it: it is
dropped, and the next query rebuilds it.
Unique indexes other than `_id` and the `unique` field are not checked (conversations have
none).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from simulator.store import conversation_rows as rows
from simulator.store.bulk_insert import ID_TRIES, batches, first_of_each, stored_values
from simulator.store.conversation_questions import stored_keys
from simulator.store.derived_docs import DerivedEncoder
from simulator.store.embedded import table_of

STAGING = "bulk_staging"
# SQLite's page cache of the store's file while staging and copying (negative: KiB): staging
# looks up every new key and id in the store's indexes, and the copy adds them in random order,
# which a 2 MB cache turns into a read per row once the store holds millions. 256 MB keeps those
# indexes in memory beside the pages streaming out (1,000,000 rows into an empty store: 0.6 GB
# fewer bytes written than with 128 MB, 10% less CPU, 130 MB more peak memory).
CACHE_KIB = -262_144
log = logging.getLogger(__name__)


def insert_all_or_none(
    collection: Any, table: Any, docs: Iterable[dict], unique: str, new_id: Callable[[], str]
) -> int:
    """Store the documents whose `unique` value is not stored yet; return how many were."""
    connection = table._connection
    side = rows.installed(table)  # the conversations' rows: staged with the documents
    if side:
        rows.catch_up(table)
    cache = connection.execute("PRAGMA main.cache_size").fetchone()[0]
    connection.execute(f"ATTACH DATABASE '' AS {STAGING}")  # private, deleted when detached
    try:
        connection.execute(f"PRAGMA main.cache_size = {min(cache, CACHE_KIB)}")
        # pages of 64 KB: a conversation of 2.1 KB takes a 4 KB page of its own (two do not
        # fit), which doubled the staged bytes; 30 of them fill one of these
        connection.execute(f"PRAGMA {STAGING}.page_size = 65536")
        # no index: documents go in as they come; the rare checks below index what they look up
        connection.execute(f"CREATE TABLE {STAGING}.rows(_id, value, doc)")
        if side:  # their rows apart: the copies read 150 bytes a row, not 2 KB
            connection.execute(f"CREATE TABLE {STAGING}.cols(id, {', '.join(rows.COLUMNS)})")
        before = _data_version(connection)
        t0 = time.perf_counter()
        _stage(collection, table, docs, unique, new_id, side)
        connection.commit()
        t1 = time.perf_counter()
        connection.execute("BEGIN IMMEDIATE")  # no other process writes until the commit
        if _data_version(connection) != before:  # another process wrote since the checks
            connection.execute(f"CREATE INDEX {STAGING}.rows_id ON rows(_id)")
            if side:
                connection.execute(f"CREATE INDEX {STAGING}.cols_id ON cols(id)")
            _drop_stored_keys(collection, connection, unique, side)
            _renumber_taken_ids(table, connection, new_id, side)
        copy = f"INSERT INTO main.{table._table_name} SELECT _id, doc FROM {STAGING}.rows"
        t2 = time.perf_counter()
        if side:
            with rows.without_triggers(connection):
                added = connection.execute(copy + " ORDER BY rowid").rowcount
                t3 = time.perf_counter()
                _add_rows(connection)
        else:
            added = connection.execute(copy + " ORDER BY rowid").rowcount
            t3 = time.perf_counter()
        t4 = time.perf_counter()
        connection.commit()
        t5 = time.perf_counter()
        log.info(
            "stored %d new documents in one transaction: staged in %.1f s, then the write lock"
            " held %.1f s (documents %.1f s, rows %.1f s, commit %.1f s)",
            added,
            t1 - t0,
            t5 - t1,
            t3 - t2,
            t4 - t3,
            t5 - t4,
        )
        return added
    finally:
        if connection.in_transaction:
            connection.rollback()
        connection.execute(f"PRAGMA main.cache_size = {cache}")
        collection._store._query_index = None
        connection.execute(f"DETACH DATABASE {STAGING}")


def _data_version(connection: Any) -> int:
    """Changes whenever another connection commits to the collection's file."""
    return connection.execute("PRAGMA main.data_version").fetchone()[0]


def _add_rows(connection: Any) -> None:
    """The staged documents' rows and their counts (the triggers are off meanwhile)."""
    names = ", ".join(rows.COLUMNS)
    connection.execute(
        f"INSERT OR REPLACE INTO main.sim_rows SELECT id, {names} FROM {STAGING}.cols"
        " ORDER BY rowid"
    )
    connection.execute(
        "INSERT INTO main.sim_counts SELECT sweep_id, coalesce(status, ''), count(*),"
        f" sum(calls), sum(tokens_out) FROM {STAGING}.cols WHERE sweep_id IS NOT NULL"
        " GROUP BY sweep_id, coalesce(status, '') ON CONFLICT(sweep_id, status) DO UPDATE SET"
        " n = n + excluded.n, calls = calls + excluded.calls,"
        " tokens_out = tokens_out + excluded.tokens_out"
    )


def _stored(collection: Any, unique: str, values: list[Any], side: bool, fresh: bool) -> set:
    """Which of `values` a stored document holds in `unique` (the conversations' rows answer
    for their `key` by index; a query would index every conversation)."""
    if side and unique == "key":
        return stored_keys(table_of(collection), values, fresh=fresh)
    return stored_values(collection, unique, values)


def _stage(
    collection: Any,
    table: Any,
    docs: Iterable[dict],
    unique: str,
    new_id: Callable[[], str],
    side: bool = False,
) -> None:
    """Encode each document with a key not stored and not seen into the staging table."""
    seen_keys: set[Any] = set()
    seen_ids: set[Any] = set()
    connection = table._connection
    insert = f"INSERT INTO {STAGING}.rows VALUES (?, ?, ?)"
    marks = ", ".join("?" * (1 + len(rows.COLUMNS)))
    insert_cols = f"INSERT INTO {STAGING}.cols VALUES ({marks})"
    encode = DerivedEncoder(table._encode_doc).encode  # a sweep's documents share a base
    encode_key, columns = table.encode_key, rows.columns
    for batch in batches(docs):
        stored = _stored(collection, unique, [d[unique] for d in batch], side, fresh=False)
        fresh = [
            d
            for d in first_of_each(batch, unique)
            if d[unique] not in stored and d[unique] not in seen_keys
        ]
        seen_keys.update(d[unique] for d in fresh)
        _fresh_ids(table, fresh, seen_ids, new_id)
        keys = [encode_key(d["_id"]) for d in fresh]
        values = [d[unique] for d in fresh]
        connection.executemany(insert, zip(keys, values, map(encode, fresh), strict=True))
        if side:
            staged = [(k, *columns(d)) for k, d in zip(keys, fresh, strict=True)]
            connection.executemany(insert_cols, staged)


def _fresh_ids(table: Any, rows: list[dict], seen: set[Any], new_id: Callable[[], str]) -> None:
    """Give a new `_id` to each row whose `_id` is stored or already staged."""
    pending = rows
    for _ in range(ID_TRIES):
        taken = _stored_ids(table, [d["_id"] for d in pending])
        clashing = []
        for doc in pending:
            if doc["_id"] in taken or doc["_id"] in seen:
                doc["_id"] = new_id()
                clashing.append(doc)
            else:
                seen.add(doc["_id"])
        if not clashing:
            return
        pending = clashing
    raise RuntimeError(f"could not allocate unique ids for {len(pending)} document(s)")


def _stored_ids(table: Any, ids: list[Any]) -> set[Any]:
    """Which of these `_id`s the collection's table holds (primary-key lookups)."""
    by_key = {table.encode_key(i): i for i in ids}
    encoded = list(by_key)
    found: set[Any] = set()
    for start in range(0, len(encoded), 500):
        chunk = encoded[start : start + 500]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT _id FROM main.{table._table_name} WHERE _id IN ({marks})"
        found.update(by_key[row[0]] for row in table._connection.execute(query, chunk))
    return found


def _drop_stored_keys(collection: Any, connection: Any, unique: str, side: bool = False) -> None:
    """Unstage rows whose key another process stored between staging and the write lock."""
    values = [row[0] for row in connection.execute(f"SELECT value FROM {STAGING}.rows")]
    connection.execute(f"CREATE INDEX IF NOT EXISTS {STAGING}.rows_value ON rows(value)")
    for value in _stored(collection, unique, values, side, fresh=True):
        if side:
            connection.execute(
                f"DELETE FROM {STAGING}.cols WHERE id IN"
                f" (SELECT _id FROM {STAGING}.rows WHERE value = ?)",
                (value,),
            )
        connection.execute(f"DELETE FROM {STAGING}.rows WHERE value = ?", (value,))


def _renumber_taken_ids(
    table: Any, connection: Any, new_id: Callable[[], str], side: bool = False
) -> None:
    """A staged row whose `_id` the table now holds gets a new one (rare: another process
    stored that random id after the staging checks)."""
    name = table._table_name
    clash = f"SELECT s._id, s.doc FROM {STAGING}.rows s JOIN main.{name} m ON m._id = s._id"
    for old_key, raw in connection.execute(clash).fetchall():
        doc = table._decode_doc(raw)
        doc["_id"] = _unused_id(table, connection, new_id)
        new_key = table.encode_key(doc["_id"])
        connection.execute(
            f"UPDATE {STAGING}.rows SET _id = ?, doc = ? WHERE _id = ?",
            (new_key, table._encode_doc(doc), old_key),
        )
        if side:
            connection.execute(f"UPDATE {STAGING}.cols SET id = ? WHERE id = ?", (new_key, old_key))


def _unused_id(table: Any, connection: Any, new_id: Callable[[], str]) -> str:
    """An `_id` neither the table nor the staging table holds."""
    for _ in range(ID_TRIES):
        candidate = new_id()
        key = table.encode_key(candidate)
        taken = connection.execute(
            f"SELECT 1 FROM main.{table._table_name} WHERE _id = ? "
            f"UNION ALL SELECT 1 FROM {STAGING}.rows WHERE _id = ?",
            (key, key),
        ).fetchone()
        if taken is None:
            return candidate
    raise RuntimeError("could not allocate a unique id")
