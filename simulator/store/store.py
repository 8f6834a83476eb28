"""The store: one open database, its indexes and migrations, and the repositories on top."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from simulator.errors import StoreUnavailable
from simulator.store.database import Connection, open_database
from simulator.store.foreign import (
    REFERENCE_COLLECTIONS,
    foreign_counts,
    import_command,
    is_foreign_id,
)
from simulator.store.group_commit import GroupCommit
from simulator.store.migrations import migrate
from simulator.store.outage import classify
from simulator.store.repositories.calls import CallsRepository
from simulator.store.repositories.conversations import ConversationsRepository
from simulator.store.repositories.experiments import ExperimentsRepository
from simulator.store.repositories.grid_steps import GRID_STEPS
from simulator.store.repositories.memories import MemoriesRepository
from simulator.store.repositories.messages import MessagesRepository
from simulator.store.repositories.network_rounds import NETWORK_ROUNDS
from simulator.store.repositories.scores import ScoresRepository
from simulator.store.repositories.sweeps import SweepsRepository
from simulator.store.repositories.users import UsersRepository
from simulator.store.repositories.world_rows import WorldRowsRepository, world_layout


@dataclass
class Store:
    connection: Connection
    users: UsersRepository
    experiments: ExperimentsRepository
    conversations: ConversationsRepository
    messages: MessagesRepository
    calls: CallsRepository
    sweeps: SweepsRepository
    scores: ScoresRepository
    grid_steps: WorldRowsRepository
    network_rounds: WorldRowsRepository
    memories: MemoriesRepository
    # the rows of the other registered worlds, by collection (`rows` opens them)
    _world_rows: dict[str, WorldRowsRepository] = field(default_factory=dict, repr=False)
    _group_commit: GroupCommit | None = field(default=None, repr=False)
    # set once the server is known gone: every further write would wait out the timeout
    unreachable: StoreUnavailable | None = field(default=None, repr=False)

    def group_commit(self) -> GroupCommit:
        """The batched writer of the running event loop: a sweep's conversations share it, so
        their hot-path writes go out together (see group_commit.py)."""
        loop = asyncio.get_running_loop()
        if self._group_commit is None or self._group_commit.loop is not loop:
            if self._group_commit is not None:
                self._group_commit.close()
            self._group_commit = GroupCommit(self.db, loop)
        return self._group_commit

    def rows(self, collection: str) -> WorldRowsRepository:
        """The repository of a world's rows by its collection ("grid_steps", "network_rounds",
        or any registered world's `ROWS_COLLECTION`: opened, with its index, on first use)."""
        for repository in (self.grid_steps, self.network_rounds, *self._world_rows.values()):
            if repository.collection == collection:
                return repository
        layout = world_layout(collection)
        if layout is None:
            raise KeyError(f"no world stores its rows in {collection!r}")
        repository = self._world_rows[collection] = WorldRowsRepository(self.db, layout)
        repository.ensure_indexes()
        return repository

    @property
    def db(self):
        return self.connection.db

    def outage(self, exc: BaseException) -> StoreUnavailable | None:
        """The store outage behind `exc` (a full disk, a server gone), else None; a server
        gone is remembered, so that nothing waits for it again (see `unreachable`)."""
        found = classify(exc, self.connection.kind, self.connection.location)
        if found is not None and found.server_lost:
            self.unreachable = found
        return found

    def close(self) -> None:
        if self._group_commit is not None:
            if self.unreachable is not None:  # queued writes cannot reach it: drop them
                self._group_commit.abandon(self.unreachable)
            self._group_commit.close()
            self._group_commit = None
        self.connection.close()

    @property
    def import_command(self) -> str:
        """The command that imports the reference tool's documents found in this database."""
        return import_command(self.connection.location, self.db.name)

    def foreign_counts(
        self, collections: tuple[str, ...] = REFERENCE_COLLECTIONS
    ) -> dict[str, int]:
        """Documents of the reference tool's collections that this tool did not write."""
        return foreign_counts(self.db, collections)

    def is_foreign(self, kind: str, typed_id: str) -> bool:
        """Whether `typed_id` names a document of `kind` ("experiment", "conversation") that
        another tool wrote, so a lookup can say whose it is instead of "not found"."""
        return is_foreign_id(self.db[kind + "s"], typed_id)


def open_store(connection: Connection) -> Store:
    """Wrap a connection: create indexes (idempotent) and apply pending migrations."""
    db = connection.db
    store = Store(
        connection,
        UsersRepository(db),
        ExperimentsRepository(db),
        ConversationsRepository(db),
        MessagesRepository(db),
        CallsRepository(db),
        SweepsRepository(db, connection.lock_path),
        ScoresRepository(db),
        WorldRowsRepository(db, GRID_STEPS),
        WorldRowsRepository(db, NETWORK_ROUNDS),
        MemoriesRepository(db),
    )
    repos = (
        store.users,
        store.experiments,
        store.conversations,
        store.messages,
        store.calls,
        store.sweeps,
        store.scores,
        store.grid_steps,
        store.network_rounds,
        store.memories,
    )
    store.experiments.import_hint = store.conversations.import_hint = store.import_command
    for repo in repos:
        repo.ensure_indexes()
    migrate(db)
    return store


def open_store_uri(uri: str, db_name: str = "llm_simulator") -> Store:
    return open_store(open_database(uri, db_name))
