"""The call ledger: every LLM call, with the exact messages sent stored once by hash."""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any

from pymongo.errors import DuplicateKeyError

from simulator.domain.ids import canonical_json, new_id

SCHEMA_VERSION = 1


def prompt_hash(messages: list[dict]) -> str:
    return hashlib.sha256(canonical_json(messages).encode("utf-8")).hexdigest()


class CallsRepository:
    def __init__(self, db: Any):
        self._calls = db.calls
        self._prompts = db.prompts
        self._known_prompts: set[str] = set()

    def ensure_indexes(self) -> None:
        self._calls.create_index([("conversation_id", 1), ("seq", 1)])

    def store_prompt(self, messages: list[dict]) -> str:
        digest = prompt_hash(messages)
        if digest in self._known_prompts:
            return digest
        with contextlib.suppress(DuplicateKeyError):
            self._prompts.insert_one(
                {"_id": digest, "messages": messages, "schema_version": SCHEMA_VERSION}
            )
        self._known_prompts.add(digest)
        if len(self._known_prompts) > 50_000:
            self._known_prompts.clear()
        return digest

    def insert(self, doc: dict) -> str:
        doc = {"_id": new_id("call"), "schema_version": SCHEMA_VERSION, **doc}
        self._calls.insert_one(doc)
        return doc["_id"]

    def for_conversation(self, conversation_id: str) -> list[dict]:
        return list(self._calls.find({"conversation_id": conversation_id}).sort("seq", 1))

    def prompt(self, digest: str) -> list[dict]:
        doc = self._prompts.find_one({"_id": digest})
        return doc["messages"] if doc else []

    def delete_for(self, conversation_id: str) -> None:
        self._calls.delete_many({"conversation_id": conversation_id})
