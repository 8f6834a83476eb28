"""Read-only answers from the embedded store's files, without its query engine.

Opening the embedded store loads litemongo, whose vendored mongomock imports pymongo and
unittest.mock: about 300 modules, most of what a `sweep status` or a `conversation list`
process spent starting. Yet those questions are answered from the conversations' rows and
counts (conversation_rows.py, conversation_questions.py) and from documents read by primary
key, which need only sqlite3 and bson. Here each collection's file is opened with sqlite3 and
shaped as the few parts of litemongo's table those questions use (`FileTable`).

Only a store that is ready is read this way: every migration applied and the conversations'
rows built. Anything else (a store to set up or migrate, a sweep that is not there or is
another tool's, an id of a type not read here) answers None, and the caller opens the store
as usual, which sets it up or says what is wrong. Documents changed since the last answer are
caught up into the rows first, in the same transaction as always (`catch_up`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bson import DEFAULT_CODEC_OPTIONS, ObjectId, decode

from simulator.store import conversation_questions as questions
from simulator.store.conversation_rows import installed
from simulator.store.embedded import OURS_FIELD, by_ids
from simulator.store.foreign import import_command, table_foreign_count
from simulator.store.migrations import META_ID, MIGRATIONS

LEGACY_KEYS = 1  # litemongo's key formats: str(id), or typed ("s:conv_…")
TYPED_KEYS = 2
CHUNK = 500  # ids per SELECT … IN


class NotReadHere(Exception):
    """An id or a state this reader does not handle: the caller opens the store instead."""


class FileTable:
    """One collection's SQLite file, with what conversation_questions.py and embedded.py ask of
    litemongo's table: the connection, the key encoding, documents by key, BSON decoding."""

    _table_name = "documents"

    def __init__(self, connection: sqlite3.Connection, key_format: int):
        self._connection = connection
        self._codec_options = DEFAULT_CODEC_OPTIONS  # litemongo's, as the store opens it
        self.key_format = key_format

    def encode_key(self, key: Any) -> str:
        if self.key_format == LEGACY_KEYS:
            return str(key)
        if isinstance(key, str):
            return "s:" + key
        if isinstance(key, ObjectId):
            return "o:" + str(key)
        raise NotReadHere(f"an id of type {type(key).__name__}")

    def _decode_doc(self, raw: bytes) -> dict:
        return decode(raw, codec_options=self._codec_options)

    def get_many(self, keys: Iterable[Any]) -> Iterator[dict]:
        """The documents with these ids, in the order given, missing ones skipped."""
        encoded = [self.encode_key(key) for key in keys]
        for start in range(0, len(encoded), CHUNK):
            chunk = encoded[start : start + CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT _id, doc FROM {self._table_name} WHERE _id IN ({marks})"
            found = dict(self._connection.execute(query, chunk).fetchall())
            yield from (self._decode_doc(found[key]) for key in chunk if key in found)

    def documents(self) -> Iterator[dict]:
        for (raw,) in self._connection.execute(f"SELECT doc FROM {self._table_name}"):
            yield self._decode_doc(raw)


class FileReader:
    """The collections of one embedded database (FOLDER/DB_NAME/COLLECTION), opened for
    reading as they are asked for; never creates a file."""

    def __init__(self, folder: Path, db_name: str):
        self.location = str(folder)
        self.db_name = db_name
        self._base = folder / db_name
        self._tables: dict[str, FileTable] = {}

    def table(self, name: str) -> FileTable:
        if name not in self._tables:
            path = self._base / name
            if not path.is_file():
                raise NotReadHere(f"no {name} file")
            # mode=rw: an existing file only (a plain connect would create an empty one)
            connection = sqlite3.connect(f"file:{quote(str(path))}?mode=rw", uri=True)
            try:
                row = connection.execute("SELECT value FROM info WHERE key = 'key_format'")
                found = row.fetchone()
            except sqlite3.OperationalError as exc:  # not a file litemongo finished setting up
                connection.close()
                raise NotReadHere(str(exc)) from None
            if found is None or found[0] not in (LEGACY_KEYS, TYPED_KEYS):
                connection.close()
                raise NotReadHere(f"{name}: unknown key format")
            self._tables[name] = FileTable(connection, found[0])
        return self._tables[name]

    def ready(self) -> bool:
        """Every migration applied and the conversations' rows built: nothing to set up."""
        try:
            meta = first(self.table("meta").get_many([META_ID]))
            version = int(meta["version"]) if meta else 0
            return version == MIGRATIONS[-1][0] and installed(self.table("conversations"))
        except (NotReadHere, sqlite3.Error, KeyError, TypeError, ValueError):
            return False

    def close(self) -> None:
        for table in self._tables.values():
            table._connection.close()
        self._tables.clear()

    # -- what `sweep status` and `conversation list` ask ---------------------------------------

    def sweep(self, sweep_id: str) -> dict:
        """This tool's sweep document; NotReadHere when there is none (the store says why)."""
        doc = first(self.table("sweeps").get_many([sweep_id]))
        if doc is None or OURS_FIELD not in doc:
            raise NotReadHere(f"no sweep {sweep_id!r} of this tool")
        return doc

    def foreign_counts(self, collections: tuple[str, ...]) -> dict[str, int]:
        return {name: table_foreign_count(self.table(name)) for name in collections}

    @property
    def import_command(self) -> str:
        return import_command(self.location, self.db_name)


def first(docs: Iterator[dict]) -> dict | None:
    return next(docs, None)


def equals(doc: dict, field: str, value: str) -> bool:
    """`{field: value}` as a query matches it, for a text `value` (a list holding it would
    match too: not read here)."""
    found = doc.get(field)
    if isinstance(found, list | tuple):
        raise NotReadHere(f"{field} holds a list")
    return found == value


class FileUsers:
    """`UsersRepository.favourites` over the favourites file."""

    def __init__(self, reader: FileReader):
        self._reader = reader

    def favourites(self, user: str, kind: str) -> set[str]:
        return {
            doc["target"]
            for doc in self._reader.table("favourites").documents()
            if OURS_FIELD in doc and equals(doc, "user", user) and equals(doc, "kind", kind)
        }


class FileConversations:
    """`ConversationsRepository.page` and `count` over the conversations' rows."""

    def __init__(self, reader: FileReader):
        self._reader = reader

    def page(
        self,
        experiment_id: str | None = None,
        owner: str | None = None,
        limit: int | None = 50,
        only: set[str] | None = None,
        exclude: set[str] | None = None,
    ) -> list[dict]:
        from simulator.store.repositories.conversations import ConversationsRepository

        table = self._reader.table("conversations")
        return ConversationsRepository.embedded_page(
            table, experiment_id, owner, limit, only, exclude
        )

    def count(self, experiment_id: str | None = None, owner: str | None = None) -> int:
        return questions.count(self._reader.table("conversations"), experiment_id, owner)


class FileListingStore:
    """What the conversation listing (services/conversation_listing.py) asks of a store."""

    def __init__(self, reader: FileReader):
        self.users = FileUsers(reader)
        self.conversations = FileConversations(reader)
        self.foreign_counts = reader.foreign_counts
        self.import_command = reader.import_command


def sweep_status(reader: FileReader, sweep_id: str) -> dict:
    """`SweepsRepository.status_summary` with the sweep's spend (services/sweep_status.py),
    from the files; NotReadHere when the store must answer."""
    from simulator.domain.spend import spend_of
    from simulator.store.sweep_summary import kept_totals, summary

    sweep = reader.sweep(sweep_id)
    table = reader.table("conversations")
    found = summary(
        sweep_id,
        sweep,
        kept_totals(questions.sweep_totals(table, sweep_id)),
        lambda limit: list(by_ids(table, questions.in_status(table, sweep_id, "failed", limit))),
        lambda: questions.lease_owners(table, sweep_id),
    )
    found["spend"] = spend_of(sweep.get("spend"))
    return found
