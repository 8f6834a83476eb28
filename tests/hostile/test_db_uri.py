"""`--db`: the stores it names are opened, anything else is refused before anything is created.

Before: `http://…`, `redis://x`, `:::` and other unknown strings silently created folders named
after them, `--db ''` fell back to the default store, a broken IPv6 address or a missing
`tlsCAFile` was a traceback, a server's odd reply to the login was a 30-line `KeyError: 'payload'`
traceback, and the hint's own example `mongodb://USER:PASSWORD@HOST:PORT` was printed redacted.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from simulator.store.database import list_databases, open_database

from .conftest import refused
from .harness import PRISON

REFUSED = [
    "",
    "   ",
    ":::",
    "http://example.com/db",
    "https://example.com",
    "redis://x",
    "redis://user:hunter2@x/0",
    "localhost:27017",
    "mongo://localhost",
    "file:",
    "nul\0byte",
    "mongodb://a\0b",
    "tab\tinside",
]


@pytest.mark.parametrize("uri", REFUSED)
def test_unknown_locations_are_refused_and_create_nothing(cli, uri):
    cwd = Path.cwd()
    before = sorted(os.listdir(cwd))
    result = cli("experiment", "list", db=uri)
    refused(result, "--db/SIM_DB", "Fix:")
    assert sorted(os.listdir(cwd)) == before
    assert "hunter2" not in result.err


@pytest.mark.parametrize(
    ("uri", "fragment"),
    [
        ("mongodb://127.0.0.1:99999", "Port must be"),
        ("mongodb://127.0.0.1:abc", "non-digit"),
        ("mongodb://[::1", "IPv6"),
        ("mongodb://[::1]:27017x", "non-digit"),
        ("mongodb://", "hostname"),
        ("mongodb+srv://u:hunter2@host:27017", "port"),
        ("mongodb://u:p%@127.0.0.1", "escaped"),
        ("mongodb://127.0.0.1:1/?tls=true&tlsCAFile=/nonexistent/ca.pem", "not valid"),
        ("mongodb://127.0.0.1:1/?authSorce=admin", "not valid"),
    ],
)
def test_malformed_mongodb_uris_are_one_paragraph(cli, uri, fragment):
    result = cli("experiment", "list", db=uri)
    refused(result, "--db/SIM_DB", "is not valid", fragment)
    assert "hunter2" not in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_the_uri_hint_shows_its_own_example_unredacted(cli):
    result = cli("experiment", "list", db="mongodb://127.0.0.1:abc")
    refused(result, "mongodb://USER:PASSWORD@HOST:PORT")


@pytest.mark.parametrize("kind", ["path", "file_uri", "mongomock"])
def test_the_known_locations_still_open(cli, tmp_path, kind):
    uri = {
        "path": str(tmp_path / "a store"),
        "file_uri": f"file:{tmp_path / 'b'}",
        "mongomock": "mongomock://hostile",
    }[kind]
    result = cli("experiment", "list", "--json", db=uri)
    assert result.code == 0, result.describe()
    assert result.out.strip() == "[]"


def test_login_refused_by_a_server_is_one_sentence(cli, wire_server):
    """nx-27017 answers SCRAM's saslStart without a payload: pymongo raised KeyError('payload')."""
    uri = wire_server.replace("mongodb://", "mongodb://someone:hunter2@")
    result = cli("experiment", "list", db=uri)
    refused(
        result, "refused the credentials", wire_server.removeprefix("mongodb://"), "--db/SIM_DB"
    )
    assert "hunter2" not in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.fixture
def garbage_server():
    """A loopback TCP server that answers anything with bytes that are not MongoDB's protocol."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.settimeout(2)
                    conn.recv(65536)
                    conn.sendall(b"\x10\x00\x00\x00HTTP/1.1 400 nonsense\r\n\r\n" * 4)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(5)
    listener.close()


def test_a_server_that_is_not_mongodb_is_one_sentence(cli, garbage_server):
    uri = f"mongodb://someone:hunter2@127.0.0.1:{garbage_server}/"
    result = cli("experiment", "list", db=uri, env={"SIM_DB_TIMEOUT_MS": "1500"})
    refused(result, f"127.0.0.1:{garbage_server}", "--db/SIM_DB")
    assert "hunter2" not in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["..", "../outside", "a/b", "a.b", "$x", "a b", "x" * 64, "a\0b"])
def test_database_names_that_would_escape_or_break_the_store_are_refused(cli, tmp_path, name):
    """Before: `--db-name ..` wrote the embedded store's collections beside its folder."""
    store = tmp_path / "inner" / "store"
    before = sorted(p.name for p in tmp_path.iterdir())
    result = cli("--db-name", name, "experiment", "list", db=str(store))
    refused(result, "--db-name/SIM_DB_NAME", "the database name")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_ordinary_database_name_still_works(cli, tmp_path):
    """What is written under `--db-name my_lab-2` lands in that database, and only there."""
    store = str(tmp_path / "s")
    result = cli("--db-name", "my_lab-2", "experiment", "list", "--json", db=store)
    assert result.code == 0, result.describe()
    made = cli("--db-name", "my_lab-2", "experiment", "create", str(PRISON), "--json", db=store)
    assert made.code == 0, made.describe()
    conn = open_database(store, "my_lab-2")
    try:
        assert list_databases(conn) == ["my_lab-2"]
        assert [d["_id"] for d in conn.db["experiments"].find()] == [json.loads(made.out)["id"]]
    finally:
        conn.close()
    listed = cli("--db-name", "my_lab-2", "experiment", "list", "--json", db=store)
    assert [e["id"] for e in json.loads(listed.out)] == [json.loads(made.out)["id"]]
    assert cli("experiment", "list", "--json", db=store).out.strip() == "[]"
