"""What every command needs: settings, a lazily opened store, the acting user, an output console."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from simulator.identity import fallback_user, resolve_user
from simulator.settings import DatabaseTarget, db_name, db_timeout_ms, resolve_database
from simulator.store.database import open_target
from simulator.store.store import Store, open_store


@dataclass
class AppContext:
    db_flag: str | None = None
    db_name: str | None = None
    user_flag: str | None = None
    interactive: bool = False
    log_folder: str | None = None
    ask_password: Callable[[], str] | None = None
    ask_user: Callable[[], str] | None = None
    console: Console = field(default_factory=lambda: Console(highlight=False))
    err: Console = field(
        default_factory=lambda: Console(stderr=True, highlight=False, soft_wrap=True)
    )
    _store: Store | None = None
    _target: DatabaseTarget | None = None
    _user: str | None = None

    @property
    def target(self) -> DatabaseTarget:
        if self._target is None:
            self._target = self._resolve_target()
        return self._target

    def _resolve_target(self) -> DatabaseTarget:
        import os

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
            self._store = open_store(
                open_target(
                    self.target,
                    self.db_name if self.db_name is not None else db_name(),
                    db_timeout_ms(),
                )
            )
        return self._store

    @property
    def user(self) -> str:
        if self._user is None:
            name = resolve_user(self.user_flag, self.target.username)
            if name is None:
                name = self.ask_user() if self.ask_user else fallback_user()
            self._user = name
        return self._user

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def print_json(self, data: Any) -> None:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()
