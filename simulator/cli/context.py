"""What every command needs: settings, a lazily opened store, the acting user, an output console."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console

from simulator.errors import UserError
from simulator.identity import fallback_user, resolve_user, user_note
from simulator.settings import (
    MONGO_SCHEMES,
    DatabaseTarget,
    db_name,
    db_timeout_ms,
    explicit_db_name,
    resolve_database,
)

if TYPE_CHECKING:  # the store's code (and its driver) loads when a command first opens it
    from simulator.store.database import Connection
    from simulator.store.file_reads import FileReader
    from simulator.store.store import Store


@dataclass
class AppContext:
    db_flag: str | None = None
    db_name: str | None = None
    user_flag: str | None = None
    interactive: bool = False
    log_folder: str | None = None
    ask_password: Callable[[], str] | None = None
    ask_user: Callable[[], str] | None = None
    # (database names on the server, the name that would be used) -> the name picked; the menu
    # sets it, as the reference tool offered the server's databases at login
    pick_database: Callable[[list[str], str], str] | None = None
    console: Console = field(default_factory=lambda: Console(highlight=False, emoji=False))
    err: Console = field(default_factory=lambda: _err_console())
    _store: Store | None = None
    _reader: FileReader | None = None
    _target: DatabaseTarget | None = None
    _user: str | None = None

    @property
    def target(self) -> DatabaseTarget:
        if self._target is None:
            self._target = self._resolve_target()
        return self._target

    def _resolve_target(self) -> DatabaseTarget:
        needs_password = (
            not self.db_flag
            and not os.environ.get("MONGODB_URI")
            and os.environ.get("DB_CLUSTER_URL")
            and os.environ.get("DB_USER")
            and os.environ.get("DB_PASSWORD") is None
        )
        if needs_password and self.ask_password is not None:
            return resolve_database(self.db_flag, password=self.ask_password())
        return resolve_database(self.db_flag)

    @property
    def store(self) -> Store:
        if self._store is None:
            from simulator.store.database import open_target
            from simulator.store.store import open_store

            name = self.db_name if self.db_name is not None else db_name()
            connection = open_target(self.target, name, db_timeout_ms())
            try:
                self._pick_database(connection)
            except BaseException:  # cancelled at the picker: asked again next time
                connection.close()
                raise
            self._store = open_store(connection)
        return self._store

    def file_reader(self) -> FileReader | None:
        """The embedded store's files, opened for reading without its engine (file_reads.py),
        when the store is a folder that is ready; None otherwise (a server, mongomock, a store
        to set up or migrate, the menu's database picker): then ask `store`."""
        if self._store is not None or self.pick_database is not None:
            return None
        from simulator.store.database import check_db_name, classify_uri, embedded_folder
        from simulator.store.file_reads import FileReader

        try:  # a location or name refused: opening the store says so, naming the field
            kind, uri = classify_uri(self.target.uri)
            name = check_db_name(self.db_name if self.db_name is not None else db_name())
        except UserError:
            return None
        if kind != "embedded":
            return None
        folder = embedded_folder(uri)
        if not folder.is_dir():
            return None
        reader = FileReader(folder, name)
        if not reader.ready():
            reader.close()
            return None
        self._reader = reader
        return reader

    def _pick_database(self, connection: Connection) -> None:
        """Offer the server's databases (or the embedded store's, when it holds several) when no
        name was given by --db-name, SIM_DB_NAME or DB_NAME; only the menu sets the hook."""
        if self.pick_database is None or self.db_name is not None or explicit_db_name():
            return
        from simulator.store.database import list_databases, use_database

        names = list_databases(connection) or []  # unlisted: no choice, not an error
        if connection.kind != "mongodb" and len(names) < 2:
            return
        if not names:
            return  # an empty server: the default name is created, as the reference did
        use_database(connection, self.pick_database(names, connection.db.name))

    @property
    def on_server(self) -> bool:
        return self.target.uri.strip().startswith(MONGO_SCHEMES)

    @property
    def user(self) -> str:
        if self._user is None:
            name = resolve_user(self.user_flag, self.target.username, server=self.on_server)
            if name is None:
                name = self.ask_user() if self.ask_user else fallback_user()
            self._user = name
        return self._user

    @property
    def user_note(self) -> str:
        """Whether the acting user is a login or only a label (shown by `info`)."""
        return user_note(self.on_server, self.target.username)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def print_json(self, data: Any) -> None:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()


def _err_console() -> Console:
    """Standard error: wrapped at words at a terminal's width (an 80-column terminal breaks a
    long line mid-word), one line per message when it goes to a file or a pipe, for grep and
    logs."""
    err = Console(stderr=True, highlight=False, emoji=False)
    err.soft_wrap = not err.is_terminal
    return err
