"""The call ledger: every LLM call, with the exact messages sent stored once by hash."""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any

from simulator.domain.ids import canonical_json, new_id
from simulator.store.batched import BatchReader
from simulator.store.foreign import ours

SCHEMA_VERSION = 1
PROMPT_SCHEMA_VERSION = 2  # 1 kept the messages as documents; 2 as one JSON string


class CallsRepository:
    def __init__(self, db: Any):
        self._calls = db.calls
        self._prompts = db.prompts
        self._known_prompts: set[str] = set()
        self._batched = BatchReader(self._calls)  # see for_conversations

    def ensure_indexes(self) -> None:
        self._calls.create_index([("conversation_id", 1), ("seq", 1)])

    def store_prompt(self, messages: list[dict]) -> str:
        """Store a prompt once and return its hash (the `prompt_hash` of the calls that sent it)."""
        from pymongo.errors import DuplicateKeyError

        digest, document = self.prompt_document(messages)
        if document is not None:
            with contextlib.suppress(DuplicateKeyError):
                self._prompts.insert_one(document)
            self.remember_prompt(digest)
        return digest

    def prompt_document(self, messages: list[dict]) -> tuple[str, dict | None]:
        """A prompt's hash and the document that stores it (None when this process stored it).

        The messages are kept as one JSON string rather than nested documents: a prompt is an
        opaque record, and the embedded store walks and copies every nested value it writes.
        """
        text = canonical_json(messages)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return digest, self._document(digest, text)

    def prompt_hash(self, messages: list[dict]) -> str:
        """A prompt's hash alone: a step's calls are all built at once and wait for the pool,
        so their ledgers build the stored text only when the request is about to leave."""
        return hashlib.sha256(canonical_json(messages).encode("utf-8")).hexdigest()

    def prompt_document_for(self, digest: str, messages: list[dict]) -> dict | None:
        """The document that stores a prompt whose hash is known (None: this process stored it)."""
        if digest in self._known_prompts:
            return None
        return self._document(digest, canonical_json(messages))

    def _document(self, digest: str, text: str) -> dict | None:
        if digest in self._known_prompts:
            return None
        return {"_id": digest, "messages_json": text, "schema_version": PROMPT_SCHEMA_VERSION}

    def remember_prompt(self, digest: str) -> None:
        """A prompt now stored (by this process or another): later calls skip writing it."""
        self._known_prompts.add(digest)
        if len(self._known_prompts) > 50_000:
            self._known_prompts.clear()

    @staticmethod
    def row(conversation_id: str, seq: int, doc: dict) -> dict:
        """The ledger row at `seq`. Its id is derived from the conversation and the seq, so
        uniqueness holds on every store flavour without a compound unique index."""
        return {
            "_id": f"{conversation_id}-c{seq:06d}",
            "schema_version": SCHEMA_VERSION,
            **doc,
            "seq": seq,
        }

    def insert_at(self, conversation_id: str, seq: int, doc: dict) -> bool:
        """Insert a ledger row at `seq`; False when that seq is taken (another run wrote it)."""
        from pymongo.errors import DuplicateKeyError

        try:
            self._calls.insert_one(self.row(conversation_id, seq, doc))
        except DuplicateKeyError:
            return False
        return True

    def complete(self, call_id: str, outcome: dict) -> None:
        """Fill in an in-flight row with what the call returned (or how it failed)."""
        self._calls.update_one({"_id": call_id}, {"$set": outcome})

    def max_seq(self, conversation_id: str) -> int:
        found = list(
            self._calls.find({"conversation_id": conversation_id}, {"seq": 1})
            .sort("seq", -1)
            .limit(1)
        )
        return int(found[0]["seq"]) if found else 0

    def insert(self, doc: dict) -> str:
        doc = {"_id": new_id("call"), "schema_version": SCHEMA_VERSION, **doc}
        self._calls.insert_one(doc)
        return doc["_id"]

    def for_conversation(self, conversation_id: str) -> list[dict]:
        return list(self._calls.find(ours({"conversation_id": conversation_id})).sort("seq", 1))

    def for_conversations(self, conversation_ids: list[str]) -> dict[str, list[dict]]:
        """The ledgers of a batch of conversations, each in `seq` order as `for_conversation`
        gives it: one query per 500 on a server (see batched.py); on the embedded store each
        conversation's id range (ledger ids start with the conversation id, see `row`), never
        its whole-collection index. A store holding the first version's `call_` ids asks the
        query instead (those ids say nothing of their conversation)."""
        return self._batched.grouped(conversation_ids, "seq", legacy_prefix="call_")

    def prompt(self, digest: str) -> list[dict]:
        doc = self._prompts.find_one({"_id": digest})
        if doc is None:
            return []
        if "messages_json" in doc:
            return json.loads(doc["messages_json"])
        return doc["messages"]  # schema 1 stored the messages as documents

    def delete_for(self, conversation_id: str) -> None:
        self._calls.delete_many(ours({"conversation_id": conversation_id}))
