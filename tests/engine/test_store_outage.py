"""What counts as the store going away (so runs stop resumable) and how it is said: the store's
folder or the server's host, never a password; anything else is left to fail as before."""

from __future__ import annotations

import errno
import sqlite3

import pytest
from pymongo.errors import AutoReconnect, OperationFailure, ServerSelectionTimeoutError

from simulator.errors import StoreUnavailable
from simulator.store.outage import classify

SERVER = "mongodb://alice:***@db.example.org:27017/?authSource=admin"  # as Connection keeps it


def _full() -> sqlite3.OperationalError:
    """SQLite's own error for a full database, raised by SQLite itself."""
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA max_page_count = 2")
    db.execute("CREATE TABLE t(x)")
    with pytest.raises(sqlite3.OperationalError) as raised:
        db.execute("INSERT INTO t VALUES (randomblob(100000))")
    return raised.value


def test_a_full_embedded_store_names_its_folder():
    outage = classify(_full(), "embedded", "/data/store")
    assert outage is not None and not outage.server_lost
    outage.resume = "run `llm-sim sweep resume sweep_1`"
    assert outage.render() == (
        "The disk holding the store (/data/store) is full (database or disk is full); everything "
        "stored before that is kept: free some space, then run `llm-sim sweep resume sweep_1`."
    )


def test_the_cause_is_found_behind_what_wrapped_it():
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            raise RuntimeError("flush failed") from exc
    except RuntimeError as wrapped:
        outage = classify(wrapped, "embedded", "/data/store")
    assert outage is not None
    assert (
        outage.what == "The disk holding the store (/data/store) is full (No space left on device)"
    )


def test_a_disk_io_error_is_the_disk_not_the_run():
    error = sqlite3.OperationalError("disk I/O error")
    outage = classify(error, "embedded", "/data/store")
    assert outage is not None
    assert (
        outage.what == "The store (/data/store) could not be written to its disk (disk I/O error)"
    )


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (AutoReconnect("db.example.org:27017: connection closed"), "connection closed"),
        (
            ServerSelectionTimeoutError(
                "db.example.org:27017: [Errno 111] Connection refused (configured timeouts: "
                "socketTimeoutMS: 20000.0ms, connectTimeoutMS: 20000.0ms), Timeout: 5.0s"
            ),
            "connection refused",
        ),
    ],
)
def test_a_lost_server_names_its_host_and_never_the_password(error, reason):
    outage = classify(error, "mongodb", SERVER)
    assert outage is not None and outage.server_lost
    assert outage.what == f"The MongoDB server at db.example.org:27017 stopped answering ({reason})"
    assert "alice" not in outage.render() and "***" not in outage.render()


def test_a_server_out_of_disk_space():
    error = OperationFailure("No space left on device", code=14031)
    outage = classify(error, "mongodb", SERVER)
    assert outage is not None and not outage.server_lost
    assert outage.what.startswith("The MongoDB server at db.example.org:27017 is out of disk space")


@pytest.mark.parametrize(
    "error",
    [
        ValueError("bad reply"),
        sqlite3.IntegrityError("UNIQUE constraint failed"),
        OperationFailure("not authorized", code=13),
        RuntimeError("store write failed: E11000 duplicate key"),
    ],
)
def test_anything_else_is_not_an_outage(error):
    assert classify(error, "mongodb", SERVER) is None
    assert classify(error, "embedded", "/data/store") is None


def test_an_outage_already_told_is_passed_on_as_it_is():
    told = StoreUnavailable("The disk holding the store (/x) is full (x)", "free some space, then")
    assert classify(told, "embedded", "/x") is told
