"""open_database: the only place that knows which MongoDB flavour is behind a URI."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from simulator.errors import UserError
from simulator.settings import MONGO_SCHEMES, DatabaseTarget, redact_uri, uri_hosts

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
    """Open `uri`: mongodb(+srv):// -> pymongo, mongomock:// -> mongomock, else a file store."""
    if uri.startswith(MONGO_SCHEMES):
        return _open_mongodb(uri, db_name, source, timeout_ms)
    if uri.startswith("mongomock://"):
        return _open_mongomock(uri, db_name)
    return _open_embedded(uri, db_name)


def open_target(target: DatabaseTarget, db_name: str, timeout_ms: int = 5000) -> Connection:
    return open_database(target.uri, db_name, source=target.source, timeout_ms=timeout_ms)


def _open_mongodb(uri: str, db_name: str, source: str, timeout_ms: int) -> Connection:
    import pymongo
    from pymongo import errors

    hosts = uri_hosts(uri)
    variable = _variable_hint(source)
    try:
        client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=timeout_ms, connect=False)
        client.admin.command("ping")
    except errors.ConfigurationError as exc:
        raise UserError(
            f"the MongoDB URI {redact_uri(uri)!r} is not valid ({_clean(exc, uri)})",
            field=variable,
            fix=f"correct {variable}; it should look like mongodb://USER:PASSWORD@HOST:PORT",
        ) from None
    except errors.OperationFailure as exc:
        if exc.code in (18, 8000) or "auth" in str(exc).lower():
            raise UserError(
                f"MongoDB at {hosts} refused the credentials (authentication failed)",
                field=variable,
                fix=f"check the user name and password in {variable} (or DB_USER/DB_PASSWORD)",
            ) from None
        raise UserError(
            f"MongoDB at {hosts} refused the connection check ({_clean(exc, uri)})",
            field=variable,
            fix=f"check {variable} and the server's permissions",
        ) from None
    except errors.PyMongoError as exc:
        reason = _short_reason(_clean(exc, uri))
        raise UserError(
            f"cannot reach MongoDB at {hosts} within {timeout_ms / 1000:g} s ({reason})",
            field=variable,
            fix=f"start the server or correct {variable}",
        ) from None
    log.info("connected to MongoDB at %s", redact_uri(uri))
    return Connection(client[db_name], client, "mongodb", redact_uri(uri))


def _variable_hint(source: str) -> str:
    return {"default": "SIM_DB"}.get(source, source)


def _clean(exc: Exception, uri: str) -> str:
    text = str(exc)
    netloc = urlsplit(uri).netloc
    if "@" in netloc:
        text = text.replace(netloc.rsplit("@", 1)[0], "***")
    return text


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


def _open_embedded(uri: str, db_name: str) -> Connection:
    import litemongo

    path = Path(
        uri.removeprefix("file://") if uri.startswith("file://") else uri.removeprefix("file:")
    )
    path = path.expanduser().resolve()
    try:
        path.mkdir(parents=True, exist_ok=True)
        client = litemongo.connect(str(path))
    except OSError as exc:
        raise UserError(
            f"cannot create the embedded store at {path} ({exc.strerror or exc})",
            field="--db/SIM_DB",
            fix="point --db or SIM_DB at a writable folder, or SIM_DATA_DIR at a writable place",
        ) from None
    return Connection(
        client[db_name], client, "embedded", str(path), lock_path=path / ".claims.lock"
    )
