"""open_database: the only place that knows which MongoDB flavour is behind a URI."""

from __future__ import annotations

import logging
import os
import re
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from simulator.errors import UserError
from simulator.settings import (
    MONGO_SCHEMES,
    DatabaseTarget,
    redact_uri,
    uri_hosts,
    uri_netloc,
    uri_username,
)

log = logging.getLogger(__name__)
StoreKind = Literal["mongodb", "embedded", "mongomock"]
_MOCK_CLIENTS: dict[str, Any] = {}
_MOCK_LOCK = threading.Lock()


@dataclass
class Connection:
    """An open database plus what the rest of the code needs to know about it."""

    db: Any  # a pymongo-compatible Database
    client: Any
    kind: StoreKind
    location: str  # safe to show: passwords redacted
    lock_path: Path | None = None  # set for the embedded store: cross-process claims lock here
    extras: dict = field(default_factory=dict)

    def close(self) -> None:
        if self.kind != "mongomock":
            self.client.close()


def open_database(
    uri: str, db_name: str, *, source: str = "--db/SIM_DB", timeout_ms: int = 5000
) -> Connection:
    """Open `uri`: mongodb(+srv):// -> pymongo, mongomock:// -> mongomock, a path -> file store.

    Anything else (another scheme, `host:port` without a scheme, an empty value) is refused
    before anything is created, so a typo never leaves a folder named after it.
    """
    variable = _variable_hint(source)
    kind, uri = classify_uri(uri, variable)
    check_db_name(db_name)
    if kind == "mongodb":
        return _open_mongodb(uri, db_name, source, timeout_ms)
    if kind == "mongomock":
        return _open_mongomock(uri, db_name)
    return _open_embedded(uri, db_name, variable)


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_HOST_PORT = re.compile(r"^[\w.\-]+:\d+$")


def classify_uri(uri: str, variable: str = "--db/SIM_DB") -> tuple[StoreKind, str]:
    """Which store a URI names, and the URI trimmed; UserError for anything not understood."""
    example = "mongodb://HOST:PORT, mongodb+srv://HOST, mongomock://NAME, or a folder path"
    text = uri.strip()
    if not text:
        raise UserError("the database location is empty", field=variable, fix=f"give {example}")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise UserError(
            "the database location contains a NUL or another control character",
            field=variable,
            fix=f"retype it as {example}",
        )
    if text.startswith(MONGO_SCHEMES):
        return "mongodb", text
    if text.startswith("mongomock://"):
        return "mongomock", text
    if text.startswith("file:"):
        if not _file_path(text).strip():
            raise UserError(
                f"{text!r} names no folder", field=variable, fix="write file:PATH_TO_A_FOLDER"
            )
        return "embedded", text
    scheme = _SCHEME.match(text)
    drive = (
        os.name == "nt" and scheme and len(scheme[1]) == 1 and text[2:3] in ("\\", "/")
    )  # C:\ on Windows
    if ":" in text and not drive:
        guess = ""
        if _HOST_PORT.match(text):
            guess = f" (for a server, write mongodb://{text})"
        raise UserError(
            f"{redact_uri(text)!r} is not a database location this tool knows{guess}",
            field=variable,
            fix=f"give {example} (write file:PATH for a folder whose name holds ':')",
        )
    return "embedded", text


_DB_NAME_FORBIDDEN = set('/\\. "$*<>:|?')


def check_db_name(name: str, field: str = "--db-name/SIM_DB_NAME") -> str:
    """MongoDB's rules for database names, which also keep the embedded store's per-database
    folder inside the store (a name such as '..' would write beside it)."""
    bad = [ch for ch in name if ch in _DB_NAME_FORBIDDEN or ord(ch) < 32 or ord(ch) == 127]
    if not name or len(name) > 63 or bad:
        why = f"contains {bad[0]!r}" if bad else ("is empty" if not name else "is too long")
        raise UserError(
            f"the database name {name!r} {why}",
            field=field,
            fix='use 1-63 characters without spaces or any of / \\ . " $ * < > : | ?, '
            "e.g. llm_simulator",
        )
    return name


def open_target(target: DatabaseTarget, db_name: str, timeout_ms: int = 5000) -> Connection:
    return open_database(target.uri, db_name, source=target.source, timeout_ms=timeout_ms)


SYSTEM_DATABASES = ("admin", "local", "config")


def list_databases(connection: Connection) -> list[str] | None:
    """The databases of the connection's server a user could pick, sorted, without MongoDB's
    own (admin, local, config); None when the server does not say."""
    try:
        names = connection.client.list_database_names()
    except Exception:  # a user without the listDatabases privilege, an odd server
        return None
    return sorted(n for n in names if n not in SYSTEM_DATABASES)


def _open_mongodb(uri: str, db_name: str, source: str, timeout_ms: int) -> Connection:
    import pymongo
    from pymongo import errors

    hosts = uri_hosts(uri)
    variable = _variable_hint(source)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # pymongo only warns about an unknown URI option
            client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=timeout_ms, connect=False)
    except Exception as exc:  # InvalidURI, ValueError, a missing tlsCAFile, ...
        raise UserError(
            f"the MongoDB URI {redact_uri(uri)!r} is not valid ({_clean(exc, uri)})",
            field=variable,
            fix=f"correct {variable}; it should look like mongodb://USER:PASSWORD@HOST:PORT",
        ) from None
    try:
        client.admin.command("ping")
    except errors.OperationFailure as exc:
        client.close()
        if exc.code in (18, 8000) or "auth" in str(exc).lower():
            raise _auth_failed(hosts, variable) from None
        raise UserError(
            f"MongoDB at {hosts} refused the connection check ({_clean(exc, uri)})",
            field=variable,
            fix=f"check {variable} and the server's permissions",
        ) from None
    except errors.ConfigurationError as exc:
        client.close()
        raise UserError(
            f"the MongoDB URI {redact_uri(uri)!r} is not valid ({_clean(exc, uri)})",
            field=variable,
            fix=f"correct {variable}; it should look like mongodb://USER:PASSWORD@HOST:PORT",
        ) from None
    except errors.PyMongoError as exc:
        client.close()
        reason = _short_reason(_clean(exc, uri))
        raise UserError(
            f"cannot reach MongoDB at {hosts} within {timeout_ms / 1000:g} s ({reason})",
            field=variable,
            fix=f"start the server or correct {variable}",
        ) from None
    except Exception as exc:  # a server's odd reply to the login (KeyError 'payload', ...)
        client.close()
        log.debug("MongoDB at %s answered oddly", hosts, exc_info=True)
        if uri_username(uri) is not None:
            raise _auth_failed(
                hosts, variable, f"{type(exc).__name__} {_clean(exc, uri)}"
            ) from None
        raise UserError(
            f"MongoDB at {hosts} gave a reply this tool cannot read ({type(exc).__name__})",
            field=variable,
            fix=f"check that {variable} points at a MongoDB server",
        ) from None
    log.info("connected to MongoDB at %s", redact_uri(uri))
    return Connection(client[db_name], client, "mongodb", redact_uri(uri))


def _auth_failed(hosts: str, variable: str, detail: str | None = None) -> UserError:
    why = "authentication failed"
    if detail:
        why += f"; its reply to the login was not understood: {detail}"
    return UserError(
        f"MongoDB at {hosts} refused the credentials ({why})",
        field=variable,
        fix=f"check the user name and password in {variable} (or DB_USER/DB_PASSWORD)",
    )


def _variable_hint(source: str) -> str:
    return {"default": "SIM_DB"}.get(source, source)


def _clean(exc: Exception, uri: str) -> str:
    """The exception's text with the URI's credentials (and the whole raw URI) taken out."""
    text = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(
        exc
    ).__name__
    text = text.replace(uri, redact_uri(uri))
    netloc = uri_netloc(uri)
    if "@" in netloc:
        text = text.replace(netloc.rsplit("@", 1)[0], "***")
    return text[:300]


def _short_reason(text: str) -> str:
    for marker in ("Connection refused", "timed out", "Name or service not known", "No route"):
        if marker.lower() in text.lower():
            return marker.lower()
    return text.split(",")[0][:160]


def _open_mongomock(uri: str, db_name: str) -> Connection:
    import mongomock

    with _MOCK_LOCK:
        client = _MOCK_CLIENTS.get(uri)
        if client is None:
            client = _MOCK_CLIENTS[uri] = mongomock.MongoClient()
    return Connection(client[db_name], client, "mongomock", uri)


def _file_path(uri: str) -> str:
    return uri.removeprefix("file://") if uri.startswith("file://") else uri.removeprefix("file:")


def embedded_folder(uri: str) -> Path:
    """The folder of an embedded store's URI (a path, or file:PATH), as the store opens it."""
    return Path(_file_path(uri)).expanduser().resolve()


def _open_embedded(uri: str, db_name: str, variable: str = "--db/SIM_DB") -> Connection:
    import litemongo

    from simulator.store.page_sizes import prepare

    path = embedded_folder(uri)
    try:
        path.mkdir(parents=True, exist_ok=True)
        prepare(path, db_name)
        client = litemongo.connect(str(path))
    except (OSError, ValueError) as exc:
        raise UserError(
            f"cannot create the embedded store at {path} ({getattr(exc, 'strerror', None) or exc})",
            field=variable,
            fix="point --db or SIM_DB at a writable folder, or SIM_DATA_DIR at a writable place",
        ) from None
    return Connection(
        client[db_name], client, "embedded", str(path), lock_path=path / ".claims.lock"
    )


def use_database(connection: Connection, name: str) -> None:
    """Point an open connection at another database of the same server (the menu's picker)."""
    name = check_db_name(name)
    if connection.kind == "embedded":
        from simulator.store.page_sizes import prepare

        prepare(Path(connection.location), name)
    connection.db = connection.client[name]
