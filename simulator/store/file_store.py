"""The parts of a Store that `experiment list|show`, `sweep list` and `conversation show` ask
about, answered from the embedded store's files (file_reads.py) without its query engine.

Each answer is the one the opened store gives, by the same rules: a query's documents are
this tool's (`schema_version`), read in the collection's natural order (litemongo's: its
table's ROWID order) and sorted as mongomock's `sort` does (a stable sort: ties keep that
order). Documents by id are read by primary key. A conversation's messages, summaries,
calls and a run's rows are read by their id range (their ids start with the conversation's
id, as the store's own batch reads rely on), in natural order, then sorted the same way.

Whatever these rules do not cover (an id not found, another tool's document, a field of a type
the store would compare by BSON's rules, calls of the first version's ids, a part of the store
not offered here) raises NotReadHere: the command then asks the opened store, which answers or
says what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from simulator.store import conversation_questions as questions
from simulator.store import file_reads
from simulator.store.embedded import OURS_FIELD, has_id_prefix
from simulator.store.file_reads import (
    FileConversations,
    FileListingStore,
    FileReader,
    FileTable,
    NotReadHere,
    equals,
    first,
)

LEGACY_CALL_IDS = "call_"  # the first version's call ids say nothing of their conversation


class NotOnFiles(NotReadHere, AttributeError):
    """A part of the store these classes do not offer (a world may ask its own): the store
    answers. An AttributeError too, so `getattr(part, name, default)` still gives `default`."""


class OnFiles:
    """A part of the store over the files: any other name asked of it is left to the store."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotOnFiles(f"{type(self).__name__}.{name}")


def by_id(table: FileTable, doc_id: str) -> dict | None:
    """The document with this string id (None when there is none), by primary key."""
    doc = first(table.get_many([doc_id]))
    if doc is not None and doc.get("_id") != doc_id:  # legacy keys: an ObjectId of that hex
        raise NotReadHere(f"{doc_id!r} names a document of another type")
    return doc


def ours_by_id(table: FileTable, doc_id: str) -> dict:
    """This tool's document with this id; NotReadHere when there is none (the store says why:
    not found, or another tool's)."""
    doc = by_id(table, doc_id)
    if doc is None or OURS_FIELD not in doc:
        raise NotReadHere(f"no document {doc_id!r} of this tool")
    return doc


def ours_where(table: FileTable, field: str, value: str | None) -> list[dict]:
    """`find(ours({field: value}))` (`value` None: no condition), in natural order."""
    return [
        doc
        for doc in table.documents()
        if OURS_FIELD in doc and (value is None or equals(doc, field, value))
    ]


def sorted_by(docs: list[dict], field: str, kind: type | tuple[type, ...], descending: bool):
    """`.sort(field, ±1)` of documents whose `field` values are all of `kind` (values of mixed
    types compare by BSON's rules: not read here)."""
    values = [doc.get(field) for doc in docs]
    if not all(isinstance(value, kind) and not isinstance(value, bool) for value in values):
        raise NotReadHere(f"{field} values of other types")
    return sorted(docs, key=lambda doc: doc[field], reverse=descending)


def of_conversation(table: FileTable, conversation_id: str, order: str = "ROWID") -> Iterator[dict]:
    """This tool's documents of a conversation, from their id range (ids `<conversation
    id>-…`), in natural order (`order` "_id": in id order, as the store's batch reads give
    them)."""
    low, high = table.encode_key(f"{conversation_id}-"), table.encode_key(f"{conversation_id}.")
    query = f"SELECT doc FROM {table._table_name} WHERE _id >= ? AND _id < ? ORDER BY {order}"
    for (raw,) in table._connection.execute(query, (low, high)):
        doc = table._decode_doc(raw)
        if OURS_FIELD in doc and doc.get("conversation_id") == conversation_id:
            yield doc


class FileUsers(OnFiles, file_reads.FileUsers):
    """`UsersRepository.favourites` and `is_favourite` over the favourites file."""

    def is_favourite(self, user: str, kind: str, target_id: str) -> bool:
        return by_id(self._reader.table("favourites"), f"{user}|{kind}|{target_id}") is not None


class FileExperiments(OnFiles):
    """`ExperimentsRepository.get` and `list`."""

    def __init__(self, reader: FileReader):
        self._reader = reader

    def get(self, experiment_id: str) -> dict:
        return ours_by_id(self._reader.table("experiments"), experiment_id)

    def list(self, owner: str | None = None) -> list[dict]:
        docs = ours_where(self._reader.table("experiments"), "owner", owner or None)
        return sorted_by(docs, "created_at", datetime, descending=True)


class FileSweeps(OnFiles):
    """`SweepsRepository.get`, `list` and `status_counts_of`."""

    def __init__(self, reader: FileReader):
        self._reader = reader

    def get(self, sweep_id: str) -> dict:
        return ours_by_id(self._reader.table("sweeps"), sweep_id)

    def list(self, experiment_id: str | None = None) -> list[dict]:
        docs = ours_where(self._reader.table("sweeps"), "experiment_id", experiment_id or None)
        return sorted_by(docs, "created_at", datetime, descending=True)

    def status_counts_of(self, sweep_ids: list[str]) -> dict[str, dict[str | None, int]]:
        return questions.sweep_counts(self._reader.table("conversations"), sweep_ids)


class FileRunConversations(FileConversations, OnFiles):
    """`ConversationsRepository.get` and `summaries`, with the listing's `page` and `count`."""

    def get(self, conversation_id: str) -> dict:
        return ours_by_id(self._reader.table("conversations"), conversation_id)

    def summaries(self, conversation_id: str) -> list[dict]:
        docs = list(of_conversation(self._reader.table("summaries"), conversation_id))
        return sorted_by(docs, "day", int, descending=False)


class FileMessages(OnFiles):
    """`MessagesRepository.for_conversation`."""

    def __init__(self, reader: FileReader):
        self._reader = reader

    def for_conversation(self, conversation_id: str) -> list[dict]:
        docs = list(of_conversation(self._reader.table("messages"), conversation_id))
        return sorted_by(docs, "seq", int, descending=False)


class FileCalls(OnFiles):
    """`CallsRepository.for_conversation` and `prompt`."""

    def __init__(self, reader: FileReader):
        self._reader = reader

    def for_conversation(self, conversation_id: str) -> list[dict]:
        table = self._reader.table("calls")
        if has_id_prefix(table, LEGACY_CALL_IDS):
            raise NotReadHere("calls of the first version's ids")
        return sorted_by(list(of_conversation(table, conversation_id)), "seq", int, False)

    def prompt(self, digest: str) -> list[dict]:
        doc = first(self._reader.table("prompts").get_many([digest]))
        if doc is None:
            return []
        if "messages_json" in doc:
            return json.loads(doc["messages_json"])
        return doc["messages"]


class FileRows(OnFiles):
    """`WorldRowsRepository.for_run`: a grid's steps, a network's rounds, by unit then agent."""

    def __init__(self, reader: FileReader, collection: str, unit: str):
        self._reader, self.collection, self._unit = reader, collection, unit

    def for_run(self, run_id: str) -> list[dict]:
        docs = list(of_conversation(self._reader.table(self.collection), run_id, "_id"))
        sorted_by(docs, "agent_index", int, descending=False)  # both of one type
        docs = sorted_by(docs, self._unit, int, descending=False)
        return sorted(docs, key=lambda d: (d[self._unit], d["agent_index"]))


class FileStore(FileListingStore, OnFiles):
    """What the read-only commands ask of a Store, over the files (see the module's text)."""

    def __init__(self, reader: FileReader):
        super().__init__(reader)
        self._reader = reader
        self.users: Any = FileUsers(reader)
        self.conversations: Any = FileRunConversations(reader)
        self.experiments = FileExperiments(reader)
        self.sweeps = FileSweeps(reader)
        self.messages = FileMessages(reader)
        self.calls = FileCalls(reader)

    def rows(self, collection: str) -> FileRows:
        """A world's rows by collection, as `Store.rows` opens them."""
        from simulator.store.repositories.grid_steps import GRID_STEPS
        from simulator.store.repositories.network_rounds import NETWORK_ROUNDS
        from simulator.store.repositories.world_rows import world_layout

        known = {layout.collection: layout for layout in (GRID_STEPS, NETWORK_ROUNDS)}
        layout = known.get(collection) or world_layout(collection)
        if layout is None:
            raise KeyError(f"no world stores its rows in {collection!r}")
        return FileRows(self._reader, collection, layout.unit)
