"""The embedded store's conversations, one small SQL row each, kept exact by SQLite itself.

litemongo keeps each conversation as a BSON blob; any question other than "the document with
this `_id`" read and decoded every blob (a sweep's status, a listing's newest page, the next
conversation to claim: seconds at 100,000, growing with the store). Beside the blobs, in the
same SQLite file, `sim_rows` holds per conversation the fields those questions ask about
(owner, experiment, sweep, status, cell, order, creation time, lease, calls, tokens), with
indexes; `sim_counts` holds per sweep and status how many conversations, calls and tokens.

Exact whoever writes: SQL triggers on litemongo's `documents` table mark every inserted or
changed document in `sim_dirty` (and drop the row of a deleted one) inside the writer's own
transaction, whatever the path (mongomock's update, a direct write, a group commit, another
process, an older version of this tool); `catch_up` re-reads the marked documents and rewrites
their rows before any answer, in one transaction; triggers on `sim_rows` keep `sim_counts` in
step. A kill at any moment leaves either the write with its mark or neither. A store written
before this existed has its rows built once, on first open (`ensure`).
"""

from __future__ import annotations

import calendar
import contextlib
import datetime
import logging
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

from simulator.store.bson_fields import top_fields

log = logging.getLogger(__name__)
VERSION = 1  # of the layout below; another number rebuilds the rows
DOCUMENTS = "documents"  # litemongo's table of a collection's documents
COLUMNS = (
    "ours",
    "key",
    "experiment_id",
    "owner",
    "sweep_id",
    "status",
    "cell_key",
    "ord",
    "created_ms",
    "lease_owner",
    "lease_expires_ms",
    "calls",
    "tokens_out",
)
_FIELDS = frozenset(
    name.encode()
    for name in (
        "schema_version",
        "key",
        "experiment_id",
        "owner",
        "sweep_id",
        "status",
        "cell_key",
        "order",
        "created_at",
        "lease_owner",
        "lease_expires_ms",
        "counters",
    )
)
# no `OR IGNORE` nor upsert in a trigger: the outer statement's conflict policy overrides them
_COUNT_ADD = (
    "INSERT INTO sim_counts SELECT NEW.sweep_id, coalesce(NEW.status, ''), 0, 0, 0"
    " WHERE NEW.sweep_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sim_counts"
    " WHERE sweep_id = NEW.sweep_id AND status = coalesce(NEW.status, ''));"
    " UPDATE sim_counts SET n = n + 1, calls = calls + NEW.calls,"
    " tokens_out = tokens_out + NEW.tokens_out"
    " WHERE sweep_id = NEW.sweep_id AND status = coalesce(NEW.status, '');"
)
_COUNT_REMOVE = (
    "UPDATE sim_counts SET n = n - 1, calls = calls - OLD.calls,"
    " tokens_out = tokens_out - OLD.tokens_out"
    " WHERE sweep_id = OLD.sweep_id AND status = coalesce(OLD.status, '');"
)
_MARK = (
    "INSERT INTO sim_dirty SELECT {0} WHERE NOT EXISTS (SELECT 1 FROM sim_dirty WHERE id = {0});"
)
# the triggers that keep the rows (on litemongo's table) and the counts (on the rows) in step
TRIGGERS = {
    "sim_mark_insert": f"AFTER INSERT ON {DOCUMENTS} BEGIN {_MARK.format('NEW._id')} END",
    "sim_mark_update": f"AFTER UPDATE ON {DOCUMENTS} BEGIN {_MARK.format('NEW._id')}"
    f" {_MARK.format('OLD._id')} END",
    "sim_mark_delete": f"AFTER DELETE ON {DOCUMENTS} BEGIN"
    " DELETE FROM sim_rows WHERE id = OLD._id; DELETE FROM sim_dirty WHERE id = OLD._id; END",
    "sim_count_insert": f"AFTER INSERT ON sim_rows BEGIN {_COUNT_ADD} END",
    "sim_count_delete": f"AFTER DELETE ON sim_rows BEGIN {_COUNT_REMOVE} END",
    "sim_count_update": f"AFTER UPDATE ON sim_rows BEGIN {_COUNT_REMOVE} {_COUNT_ADD} END",
}
TABLES = (
    "CREATE TABLE IF NOT EXISTS sim_info(name TEXT PRIMARY KEY, value) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS sim_dirty(id PRIMARY KEY) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS sim_counts(sweep_id TEXT NOT NULL, status TEXT NOT NULL,"
    " n INTEGER, calls INTEGER, tokens_out INTEGER, PRIMARY KEY(sweep_id, status)) WITHOUT ROWID",
    f"CREATE TABLE IF NOT EXISTS sim_rows(id PRIMARY KEY, {', '.join(COLUMNS)}) WITHOUT ROWID",
)
# `ours` leads rather than a partial index's WHERE: SQLite then counts from the index alone
# (a partial index made it look up every row: 1 s per 100,000)
INDEXES = {
    "sim_rows_mine": "sim_rows(ours, created_ms, id)",
    "sim_rows_of_experiment": "sim_rows(ours, experiment_id, created_ms, id)",
    "sim_rows_of_owner": "sim_rows(ours, owner, created_ms, id)",
    "sim_rows_of_both": "sim_rows(ours, experiment_id, owner, created_ms, id)",
    "sim_rows_status": "sim_rows(sweep_id, status, ord)",
    "sim_rows_key": "sim_rows(key)",
}
UPSERT = (
    f"INSERT INTO sim_rows VALUES ({', '.join('?' * (len(COLUMNS) + 1))}) ON CONFLICT(id) DO UPDATE"
    f" SET {', '.join(f'{c} = excluded.{c}' for c in COLUMNS)}"
)
BATCH = 500
# how long a write to the conversations' file waits for another process's write lock: a sweep's
# bulk insert holds it while it copies every conversation (30 s for 1,000,000), and a worker's
# claim or status write waits for it rather than failing after sqlite3's default 5 s; a
# question's catching up still gives up after 5 s and answers from the rows it has
WRITE_WAIT_MS = 300_000
CATCH_UP_WAIT_MS = 5_000


def installed(table: Any) -> bool:
    """Whether this litemongo table's file holds the rows, built for this layout."""
    try:
        row = table._connection.execute(
            "SELECT value FROM sim_info WHERE name = 'version'"
        ).fetchone()
    except Exception:  # no sim_info table yet (sqlite3.OperationalError)
        return False
    return row is not None and row[0] == VERSION


def ensure(table: Any) -> bool:
    """Install the rows, their indexes and triggers, building them from every stored document
    when this file has none (a store written before they existed): once, in one transaction
    that waits for any other process doing the same. True when it built them here."""
    _wait_for_writers(table._connection)
    if installed(table):
        _index(table._connection)
        return False
    connection = table._connection
    with _patient(connection), connection:
        connection.execute("BEGIN IMMEDIATE")
        if installed(table):  # another process built them while this one waited
            return False
        for name in ("sim_rows", "sim_counts", "sim_dirty"):
            connection.execute(f"DROP TABLE IF EXISTS {name}")  # an older layout's
        for statement in TABLES:
            connection.execute(statement)
        with without_triggers(connection):
            raws = connection.execute(f"SELECT _id, doc FROM {DOCUMENTS} ORDER BY ROWID")
            marks = ", ".join("?" * (len(COLUMNS) + 1))
            connection.executemany(
                f"INSERT INTO sim_rows VALUES ({marks})",
                (row_of(table, key, raw) for key, raw in raws),
            )
            _index(connection)  # after the rows: one sorted build each, not N inserts
            connection.execute(
                "INSERT INTO sim_counts SELECT sweep_id, coalesce(status, ''), count(*),"
                " sum(calls), sum(tokens_out) FROM sim_rows WHERE sweep_id IS NOT NULL"
                " GROUP BY sweep_id, coalesce(status, '')"
            )
        connection.execute("INSERT OR REPLACE INTO sim_info VALUES ('version', ?)", (VERSION,))
    return True


def _wait_for_writers(connection: Any) -> None:
    """Writes on this connection wait up to WRITE_WAIT_MS for another writer's lock (unless
    the connection was given a wait of its own: sqlite3's default is 5 s)."""
    if connection.execute("PRAGMA busy_timeout").fetchone()[0] == 5_000:
        connection.execute(f"PRAGMA busy_timeout = {WRITE_WAIT_MS}")


def _index(connection: Any) -> None:
    """The rows' indexes as INDEXES lists them (any other `sim_rows_` index dropped), in one
    transaction when one is missing; nothing written when they are all there."""
    query = "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'sim_rows_%'"
    if {name for (name,) in connection.execute(query)} == INDEXES.keys():
        return
    with _patient(connection), contextlib.ExitStack() as stack:
        if not connection.in_transaction:
            stack.enter_context(connection)
            connection.execute("BEGIN IMMEDIATE")
        for (name,) in connection.execute(query).fetchall():
            if name not in INDEXES and not name.startswith("sim_rows_autoindex"):
                connection.execute(f"DROP INDEX {name}")
        for name, columns in INDEXES.items():
            connection.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {columns}")


@contextlib.contextmanager
def without_triggers(connection: Any) -> Iterator[None]:
    """Inside a write transaction: the triggers dropped, then created again before it ends,
    for a writer that keeps the rows and counts itself (the whole-table build, a sweep's bulk
    insert). A rollback restores them with everything else."""
    for name in TRIGGERS:
        connection.execute(f"DROP TRIGGER IF EXISTS {name}")
    yield
    for name, body in TRIGGERS.items():
        connection.execute(f"CREATE TRIGGER {name} {body}")


@contextlib.contextmanager
def _patient(connection: Any) -> Iterator[None]:
    """Wait up to 10 minutes for the write lock (a build of a million rows takes a while),
    with a page cache large enough for the build's indexes."""
    before = connection.execute("PRAGMA busy_timeout").fetchone()[0]
    cache = connection.execute("PRAGMA cache_size").fetchone()[0]
    connection.execute("PRAGMA busy_timeout = 600000")
    connection.execute("PRAGMA cache_size = -65536")  # 64 MiB
    try:
        yield
    finally:
        connection.execute(f"PRAGMA busy_timeout = {int(before)}")
        connection.execute(f"PRAGMA cache_size = {int(cache)}")


def catch_up(table: Any) -> Any:
    """Rewrite the rows of the documents changed since the last answer (marked by the
    triggers), in one transaction; the table's connection, ready for questions."""
    connection = table._connection
    if connection.execute("SELECT 1 FROM sim_dirty LIMIT 1").fetchone() is None:
        return connection
    if connection.in_transaction:  # inside a writer's transaction: join it
        _catch_up(table, connection)
        return connection
    wait = connection.execute("PRAGMA busy_timeout").fetchone()[0]
    try:
        connection.execute(f"PRAGMA busy_timeout = {min(wait, CATCH_UP_WAIT_MS)}")
        with connection:
            connection.execute("BEGIN IMMEDIATE")
            _catch_up(table, connection)
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc):
            raise
        # another process has held the write lock past the busy timeout (a sweep's bulk
        # insert of 100,000): answer from the rows as they are; the next answer catches up
        log.info("conversation rows not caught up (%s); answering from the last ones", exc)
    finally:
        connection.execute(f"PRAGMA busy_timeout = {int(wait)}")
    return connection


def _catch_up(table: Any, connection: Any) -> None:
    keys = [row[0] for row in connection.execute("SELECT id FROM sim_dirty")]
    for start in range(0, len(keys), BATCH):
        chunk = keys[start : start + BATCH]
        marks = ",".join("?" * len(chunk))
        found = dict(
            connection.execute(f"SELECT _id, doc FROM {DOCUMENTS} WHERE _id IN ({marks})", chunk)
        )
        _put_many(connection, (row_of(table, key, raw) for key, raw in found.items()))
        gone = [(key,) for key in chunk if key not in found]
        connection.executemany("DELETE FROM sim_rows WHERE id = ?", gone)
        connection.executemany("DELETE FROM sim_dirty WHERE id = ?", [(k,) for k in chunk])


def _put_many(connection: Any, rows: Iterable[tuple]) -> None:
    connection.executemany(UPSERT, rows)


def row_of(table: Any, key: Any, raw: bytes) -> tuple:
    """The row of one stored document: its encoded `_id`, then COLUMNS."""
    fields = top_fields(raw, _FIELDS, table._codec_options)
    if fields is None:  # an element type the walk does not know
        fields = table._decode_doc(raw)
    return (key, *columns(fields))


def columns(doc: dict) -> tuple:
    """COLUMNS of a conversation document (or of its top-level fields). Called once per
    conversation by a sweep's bulk insert: written for speed."""
    get = doc.get
    counters = get("counters")
    if not isinstance(counters, dict):
        counters = {}
    order, lease = get("order"), get("lease_expires_ms")
    return (
        1 if "schema_version" in doc else 0,
        _text(get("key")),
        _text(get("experiment_id")),
        _text(get("owner")),
        _text(get("sweep_id")),
        _text(get("status")),
        _text(get("cell_key")),
        order if type(order) in _NUMBERS else _number(order),
        _ms(get("created_at")),
        _text(get("lease_owner")),
        lease if type(lease) in _NUMBERS else _number(lease),
        _whole(counters.get("calls")),
        _whole(counters.get("tokens_out")),
    )


_NUMBERS = (int, float)


def _text(value: Any) -> str | None:
    return value if type(value) is str or isinstance(value, str) else None


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _whole(value: Any) -> int:
    if value is None:
        return 0
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _ms(value: Any) -> int | None:
    """Epoch milliseconds of a stored time (a datetime, or nx-27017's ISO string)."""
    if type(value) is datetime.datetime and value.tzinfo is None:
        return (value - _EPOCH) // _MS
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = datetime.datetime.fromisoformat(value.replace("Z", ""))
    if not isinstance(value, datetime.datetime):
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return calendar.timegm(value.timetuple()) * 1000 + value.microsecond // 1000


_EPOCH = datetime.datetime(1970, 1, 1)
_MS = datetime.timedelta(milliseconds=1)


def rows_table(collection: Any) -> Any | None:
    """The collection's litemongo table with its rows installed (built now when missing);
    None on MongoDB and mongomock, which answer through their own indexes."""
    from simulator.store.embedded import table_of

    table = table_of(collection)
    if table is None:
        return None
    ensure(table)
    return table


def drift(table: Any) -> list[str]:
    """How the kept rows and counts differ from a full recount of the stored documents (each
    one decoded whole): empty when exact. For tests and checks, never on a hot path."""
    connection = catch_up(table)
    expected = {
        key: (key, *columns(table._decode_doc(raw)))
        for key, raw in connection.execute(f"SELECT _id, doc FROM {DOCUMENTS}")
    }
    kept = {row[0]: tuple(row) for row in connection.execute("SELECT * FROM sim_rows")}
    found = [
        f"row {key}: kept {kept.get(key)}, stored {row}"
        for key, row in expected.items()
        if kept.get(key) != row
    ]
    found += [f"row {key} kept for no document" for key in kept.keys() - expected.keys()]
    counts: dict[tuple, list[int]] = {}
    for row in expected.values():
        if row[5] is not None:
            total = counts.setdefault((row[5], row[6] or ""), [0, 0, 0])
            total[0] += 1
            total[1] += row[12]
            total[2] += row[13]
    kept_counts = {
        (sweep_id, status): [n, calls, tokens]
        for sweep_id, status, n, calls, tokens in connection.execute("SELECT * FROM sim_counts")
        if n
    }
    if kept_counts != counts:
        found.append(f"counts: kept {kept_counts}, recounted {counts}")
    return found
