"""A store that stopped taking writes, told apart from a bug: the embedded store's disk is full,
a MongoDB server went away or ran out of space. These are the environment's doing, not a run's,
so the engine stops runs resumable instead of marking them failed, and the CLI names the store
(its folder, or the server's host, never a password) in one sentence."""

from __future__ import annotations

import errno
import re
import sqlite3
from collections.abc import Iterator

from simulator.errors import StoreUnavailable
from simulator.settings import uri_hosts

FULL_MARKERS = ("database or disk is full", "no space left on device")
OUT_OF_DISK_SPACE = 14031  # MongoDB's OutOfDiskSpace
_HOST_PREFIX = re.compile(r"^[\w.\-\[\]:]+:\d+: ")


def classify(
    exc: BaseException, kind: str | None = None, location: str | None = None
) -> StoreUnavailable | None:
    """The outage behind `exc` (or its causes), for a store of `kind` at `location` (a path,
    or a redacted mongodb:// URI; both None where the store is not known); None when `exc` is
    something else."""
    server = (
        f"The MongoDB server at {uri_hosts(location)}"
        if kind == "mongodb" and location
        else ("The MongoDB server")
    )
    for error in _causes(exc):
        if isinstance(error, StoreUnavailable):
            return error
        if _disk_full(error):
            detail = _detail(error)
            if kind == "mongodb" or (kind is None and _is_pymongo(error)):
                return StoreUnavailable(
                    f"{server} is out of disk space ({detail})", "once it has space again,"
                )
            where = f" ({location})" if location else ""
            return StoreUnavailable(
                f"The disk holding the store{where} is full ({detail})", "free some space, then"
            )
        if _disk_error(error):
            where = f" ({location})" if location else ""
            return StoreUnavailable(
                f"The store{where} could not be written to its disk ({_detail(error)})",
                "check that disk (free space, a drive that went away), then",
            )
        if kind in ("mongodb", None) and _connection_lost(error):
            return StoreUnavailable(
                f"{server} stopped answering ({_reason(error)})",
                "once it is back,",
                server_lost=True,
            )
    return None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, what it was raised from or during, and the members of exception groups."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        error = todo.pop(0)
        if id(error) in seen:
            continue
        seen.add(id(error))
        yield error
        if isinstance(error, BaseExceptionGroup):
            todo.extend(error.exceptions)
        todo.extend(e for e in (error.__cause__, error.__context__) if e is not None)


def _disk_full(error: BaseException) -> bool:
    if isinstance(error, sqlite3.Error) and getattr(error, "sqlite_errorcode", None) == 13:
        return True  # SQLITE_FULL
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if getattr(error, "code", None) == OUT_OF_DISK_SPACE and _is_pymongo(error):
        return True
    if isinstance(error, sqlite3.Error | OSError | RuntimeError) or _is_pymongo(error):
        text = str(error).lower()  # litemongo's and nx-27017's wrapped SQLite errors
        return any(marker in text for marker in FULL_MARKERS)
    return False


def _disk_error(error: BaseException) -> bool:
    """SQLite's SQLITE_IOERR family: what a full disk gives when the WAL cannot grow."""
    if not isinstance(error, sqlite3.Error):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    return (code is not None and code & 0xFF == 10) or "disk i/o error" in str(error).lower()


def _connection_lost(error: BaseException) -> bool:
    try:
        from pymongo.errors import ConnectionFailure
    except ImportError:  # pragma: no cover - pymongo is a dependency
        return False
    return isinstance(error, ConnectionFailure)


def _is_pymongo(error: BaseException) -> bool:
    return type(error).__module__.startswith("pymongo")


def _detail(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    text = str(error).strip() or type(error).__name__
    return text.removeprefix("store write failed: ")[:160]


def _reason(error: BaseException) -> str:
    """The short cause: "connection refused", "timed out", "connection closed"."""
    text = _HOST_PREFIX.sub("", str(error).strip())
    lowered = text.lower()
    for marker in ("connection refused", "timed out", "connection closed", "connection reset"):
        if marker in lowered:
            return marker
    return (text.split(",")[0].split(" (configured")[0][:120]) or type(error).__name__
