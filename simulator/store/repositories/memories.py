"""Memories: one document per record of an agent's memory stream (domain/memory/records.py).

The id says where a record belongs (`memory_id(run, agent, seq)`), so a resumed run that
stores record 17 again finds it stored and writes nothing: `insert` is idempotent. Fields are
the record's (`conversation_id` is its run, as in every per-run collection) plus its vector:
`embedding` holds little-endian float32 bytes (BSON binary; 1.5 KB for MiniLM's 384 numbers
against 3.5 KB as a list of doubles, read back with one `np.frombuffer`), `embedding_dim` its
length and `embedder` the embedder string that made it (llm/embeddings.py), so a run resumed
with another embedder can tell its stored vectors apart. Bytes survive insert and `$set` on
litemongo, mongomock and MongoDB servers alike (probed on nx-27017 too). Times are simulated
minutes (integers), so `last_accessed` compares the same on every store.

Reads of one agent's stream go by `_id` range on the embedded store (its records are one
contiguous range: no scan of the collection), and by `$eq` on (conversation_id, agent_index)
on a server (nx-27017 searches its index for `$eq` only; see store/batched.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simulator.memory.domain.records import MemoryRecord, agent_id_range
from simulator.store.counting import count
from simulator.store.embedded import by_ids, id_range, table_of
from simulator.store.embedded_writes import direct_table
from simulator.store.foreign import ours
from simulator.store.indexes import ensure_marker_index

if TYPE_CHECKING:  # numpy loads with the first vector read or written, not with every store
    import numpy as np

SCHEMA_VERSION = 1
CHUNK = 500  # ids per `$in`
DUPLICATE = 11000
_RECORD_FIELDS = tuple(f for f in MemoryRecord.model_fields if f not in ("id", "run_id"))


@dataclass
class StoredStream:
    """An agent's stored records in stream order, each one's vector (None where none was
    stored yet) and the embedders that made the vectors."""

    records: list[MemoryRecord]
    vectors: list[np.ndarray | None]
    embedders: set[str]

    def matrix(self) -> np.ndarray:
        """The vectors as one (n, dim) matrix; ValueError when any record lacks one."""
        missing = [r.id for r, v in zip(self.records, self.vectors, strict=True) if v is None]
        if missing:
            raise ValueError(f"{len(missing)} record(s) have no stored vector, e.g. {missing[0]}")
        import numpy as np

        if not self.vectors:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([v for v in self.vectors if v is not None])


def encode_vector(vector: np.ndarray | Sequence[float]) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def decode_vector(raw: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(bytes(raw), dtype="<f4").astype(np.float32)


class MemoriesRepository:
    def __init__(self, db: Any):
        self._col = db.memories

    def ensure_indexes(self) -> None:
        self._col.create_index([("conversation_id", 1), ("agent_index", 1), ("seq", 1)])
        ensure_marker_index(self._col)

    @staticmethod
    def document(
        record: MemoryRecord,
        embedding: np.ndarray | Sequence[float] | None = None,
        embedder: str | None = None,
    ) -> dict:
        """The stored form of a record (and its vector, when given), its id the record's."""
        doc: dict[str, Any] = {
            "_id": record.id,
            "schema_version": SCHEMA_VERSION,
            "conversation_id": record.run_id,
            **record.model_dump(include=set(_RECORD_FIELDS)),
        }
        if embedding is not None:
            doc.update(_vector_fields(embedding, embedder))
        return doc

    def insert(
        self,
        records: Sequence[MemoryRecord],
        embeddings: np.ndarray | Sequence[Sequence[float]] | None = None,
        embedder: str | None = None,
    ) -> int:
        """Store the records not stored yet (with row i of `embeddings` for record i); return
        how many were stored. A stored id is never written again, whatever it holds."""
        from pymongo.errors import BulkWriteError, DuplicateKeyError

        if embeddings is not None and len(embeddings) != len(records):
            raise ValueError(f"{len(records)} records, {len(embeddings)} vectors")
        docs = [
            self.document(r, None if embeddings is None else embeddings[i], embedder)
            for i, r in enumerate(records)
        ]
        stored = self._stored_ids([d["_id"] for d in docs])
        fresh = list({d["_id"]: d for d in docs if d["_id"] not in stored}.values())
        if not fresh:
            return 0
        try:
            self._col.insert_many(fresh, ordered=False)
        except BulkWriteError as exc:  # another writer stored some first: theirs stand
            errors = exc.details.get("writeErrors", [])
            if not errors or any(e.get("code") != DUPLICATE for e in errors):
                raise
            return len(fresh) - len(errors)
        except DuplicateKeyError:
            return len(fresh) - len(self._stored_ids([d["_id"] for d in fresh]))
        return len(fresh)

    def load(self, run_id: str, agent_index: int) -> StoredStream:
        """One agent's stored stream, in stream (= creation) order, with its vectors."""
        table = table_of(self._col)
        if table is not None:
            low, high = agent_id_range(run_id, agent_index)
            docs = [d for d in id_range(table, low, high) if "schema_version" in d]
        else:
            query = {"conversation_id": {"$eq": run_id}, "agent_index": {"$eq": agent_index}}
            docs = list(self._col.find(ours(query)))
        docs.sort(key=lambda d: d["seq"])
        return StoredStream(
            [_record(d) for d in docs],
            [_vector(d) for d in docs],
            {d["embedder"] for d in docs if d.get("embedder")},
        )

    def stream(self, run_id: str, agent_index: int) -> list[MemoryRecord]:
        """One agent's records in stream order."""
        return self.load(run_id, agent_index).records

    def agents(self, run_id: str) -> dict[int, int]:
        """How many records each agent of a run has stored."""
        found: dict[int, int] = {}
        for doc in self._col.find(ours({"conversation_id": {"$eq": run_id}}), {"agent_index": 1}):
            found[doc["agent_index"]] = found.get(doc["agent_index"], 0) + 1
        return dict(sorted(found.items()))

    def touch(self, ids: Iterable[str], now: int) -> None:
        """Mark records as accessed at simulated minute `now` (never moved backwards)."""
        ids = list(dict.fromkeys(ids))
        direct = direct_table(self._col)
        if direct is not None:  # no query index over every record on the embedded store
            direct.raise_to(ids, "last_accessed", now)
            return
        for start in range(0, len(ids), CHUNK):
            query = {"_id": {"$in": ids[start : start + CHUNK]}, "last_accessed": {"$lt": now}}
            self._col.update_many(ours(query), {"$set": {"last_accessed": now}})

    def set_embeddings(
        self,
        ids: Sequence[str],
        embeddings: np.ndarray | Sequence[Sequence[float]],
        embedder: str,
    ) -> None:
        """Store (or replace) the vectors of stored records, row i for `ids[i]`."""
        if len(embeddings) != len(ids):
            raise ValueError(f"{len(ids)} ids, {len(embeddings)} vectors")
        for record_id, vector in zip(ids, embeddings, strict=True):
            self._col.update_one(
                ours({"_id": record_id}), {"$set": _vector_fields(vector, embedder)}
            )

    def count(self, run_id: str) -> int:
        return count(self._col, ours({"conversation_id": run_id}))

    def _stored_ids(self, ids: list[str]) -> set[str]:
        table = table_of(self._col)
        if table is not None:
            return {d["_id"] for d in by_ids(table, ids)}
        found: set[str] = set()
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            found.update(d["_id"] for d in self._col.find({"_id": {"$in": chunk}}, {"_id": 1}))
        return found


def _vector_fields(vector: np.ndarray | Sequence[float], embedder: str | None) -> dict:
    raw = encode_vector(vector)
    return {"embedding": raw, "embedding_dim": len(raw) // 4, "embedder": embedder}


def _record(doc: dict) -> MemoryRecord:
    fields = {name: doc[name] for name in _RECORD_FIELDS if name in doc}
    return MemoryRecord(id=doc["_id"], run_id=doc["conversation_id"], **fields)


def _vector(doc: dict) -> np.ndarray | None:
    raw = doc.get("embedding")
    return None if raw is None else decode_vector(raw)
