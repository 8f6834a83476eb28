"""The questions the embedded store answers from its conversations' rows (conversation_rows.py).

Each one first brings the rows up to date (`catch_up`), then asks SQLite through an index or
the kept counts: a sweep's status, a listing's page and count, the next conversations to
claim, whatever the number of conversations. Ids come back as the table's keys (`keys`) or as
the documents' own ids (`ids`); documents are then read by primary key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bson import ObjectId

from simulator.store.conversation_rows import catch_up


def sweep_totals(table: Any, sweep_id: str) -> dict[str | None, dict[str, int]]:
    """Per status of the sweep's conversations: how many, their calls and tokens out."""
    rows = catch_up(table).execute(
        "SELECT status, n, calls, tokens_out FROM sim_counts WHERE sweep_id = ? AND n > 0",
        (sweep_id,),
    )
    return {
        status or None: {"n": n, "calls": calls, "tokens_out": tokens}
        for status, n, calls, tokens in rows
    }


def sweep_counts(table: Any, sweep_ids: list[str]) -> dict[str, dict[str | None, int]]:
    """Per sweep, how many of its conversations hold each status."""
    connection = catch_up(table)
    found: dict[str, dict[str | None, int]] = {sweep_id: {} for sweep_id in sweep_ids}
    query = "SELECT status, n FROM sim_counts WHERE sweep_id = ? AND n > 0"
    for sweep_id in found:
        found[sweep_id] = {
            status or None: n for status, n in connection.execute(query, (sweep_id,))
        }
    return found


def in_status(table: Any, sweep_id: str, status: str, limit: int | None = None) -> list[Any]:
    """The ids of the sweep's conversations in `status`, in sweep order (`order`)."""
    query = "SELECT id FROM sim_rows WHERE sweep_id = ? AND status = ? ORDER BY ord, id"
    return _ids(table, query, (sweep_id, status), limit)


def waiting(table: Any, sweep_id: str, statuses: tuple[str, ...], limit: int) -> list[Any]:
    """The first `limit` ids of the sweep's conversations in any of `statuses`, in sweep
    order: the first `limit` of each status from the index, merged (an `IN` would sort them
    all)."""
    connection = catch_up(table)
    query = (
        "SELECT ord, id FROM sim_rows WHERE sweep_id = ? AND status = ? ORDER BY ord, id LIMIT ?"
    )
    found: list[tuple] = []
    for status in statuses:
        found += connection.execute(query, (sweep_id, status, limit)).fetchall()
    found.sort(key=lambda pair: (pair[0] is not None, pair[0] or 0, pair[1]))
    return [raw_id(table, key) for _, key in found[:limit]]


def expired(table: Any, sweep_id: str, moment_ms: int, limit: int) -> list[Any]:
    """Running conversations of the sweep whose lease expired before `moment_ms`."""
    query = (
        "SELECT id FROM sim_rows WHERE sweep_id = ? AND status = 'running'"
        " AND lease_expires_ms < ? ORDER BY ord, id"
    )
    return _ids(table, query, (sweep_id, moment_ms), limit)


def lease_owners(table: Any, sweep_id: str) -> list[str]:
    """The workers holding a lease on a running conversation of the sweep, sorted."""
    rows = catch_up(table).execute(
        "SELECT DISTINCT lease_owner FROM sim_rows WHERE sweep_id = ? AND status = 'running'"
        " AND lease_owner IS NOT NULL AND lease_owner != ''",
        (sweep_id,),
    )
    return sorted(owner for (owner,) in rows)


def sweep_order(table: Any, sweep_id: str) -> list[Any]:
    """The ids of the sweep's conversations in sweep order."""
    return _ids(table, "SELECT id FROM sim_rows WHERE sweep_id = ? ORDER BY ord, id", (sweep_id,))


def newest(
    table: Any,
    experiment_id: str | None,
    owner: str | None,
    limit: int | None,
    exclude: Iterable[Any] = (),
) -> list[Any]:
    """The ids of this tool's conversations (of the experiment, of the owner), newest first
    (creation time, then id), less `exclude`."""
    where, values = _listing(experiment_id, owner)
    skip = [table.encode_key(doc_id) for doc_id in exclude]
    if skip:
        where += f" AND id NOT IN ({','.join('?' * len(skip))})"
        values += skip
    query = f"SELECT id FROM sim_rows WHERE {where} ORDER BY created_ms DESC, id DESC"
    return _ids(table, query, tuple(values), limit)


def count(table: Any, experiment_id: str | None = None, owner: str | None = None) -> int:
    """How many of this tool's conversations (of the experiment, of the owner) are stored."""
    where, values = _listing(experiment_id, owner)
    query = f"SELECT count(*) FROM sim_rows WHERE {where}"
    return catch_up(table).execute(query, values).fetchone()[0]


def foreign_count(table: Any) -> int:
    """How many stored documents this tool did not write (no `schema_version`)."""
    query = "SELECT count(*) FROM sim_rows WHERE ours = 0"
    return catch_up(table).execute(query).fetchone()[0]


def stored_keys(table: Any, keys: list[str], fresh: bool = True) -> set[str]:
    """Which of these conversation `key`s a stored conversation holds (`fresh` False: as of
    the last catch-up, for a caller that must not take the write lock yet)."""
    connection = catch_up(table) if fresh else table._connection
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT key FROM sim_rows WHERE key IN ({marks})"
        found.update(key for (key,) in connection.execute(query, chunk))
    return found


def raw_id(table: Any, key: Any) -> Any:
    """The document id behind a key of litemongo's table (string ids: this tool's)."""
    if getattr(table, "key_format", 2) == 1 or not isinstance(key, str):  # legacy: str(id)
        return key
    kind, _, text = key.partition(":")
    if kind == "s":
        return text
    if kind == "o":
        return ObjectId(text)
    if kind == "n":
        return float(text) if any(c in text for c in ".en") else int(text)
    return key


def _listing(experiment_id: str | None, owner: str | None) -> tuple[str, list[Any]]:
    where, values = "ours = 1", []
    if experiment_id:
        where += " AND experiment_id = ?"
        values.append(experiment_id)
    if owner:
        where += " AND owner = ?"
        values.append(owner)
    return where, values


def _ids(table: Any, query: str, values: tuple, limit: int | None = None) -> list[Any]:
    if limit is not None:
        query, values = query + " LIMIT ?", (*values, limit)
    rows = catch_up(table).execute(query, values)
    return [raw_id(table, key) for (key,) in rows]
