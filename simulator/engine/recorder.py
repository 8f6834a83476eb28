"""The recorder: every message and every call is written the moment it exists."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from simulator.domain.budget import add_spend, call_spend, empty_spend, price_of
from simulator.domain.clock import now
from simulator.domain.fork import EDIT_PURPOSE, ForkEdit
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.domain.pricing import price_for
from simulator.domain.vocabulary import COUNTER_NAMES
from simulator.engine.call_ledger import CallLedger, redacted
from simulator.engine.embedding_ledger import EmbeddingLedger, embedding_fixed, kept_vectors
from simulator.engine.ports import Progress, TranscriptTaken
from simulator.errors import StoreUnavailable
from simulator.llm.embeddings import priced_as
from simulator.memory.domain.records import MemoryRecord
from simulator.store.group_commit import GroupCommit
from simulator.store.lineage import Prefix
from simulator.store.repositories.memories import StoredStream
from simulator.store.store import Store

if TYPE_CHECKING:  # numpy comes with the memories written
    import numpy as np

__all__ = ["CallLedger", "Progress", "StoreRecorder", "TranscriptTaken"]


class StoreRecorder:
    """The engine's `Recorder` (engine/ports.py) on the store: one run's writes and reads."""

    def __init__(
        self,
        store: Store,
        conversation_id: str,
        on_call: Callable[[dict], None] | None = None,
        lease_owner: str | None = None,
        never_started: bool = False,
        shared: Prefix | None = None,
    ):
        self.store = store
        self.shared = shared or Prefix()  # a fork's messages and summaries, read from its parent
        self.conversation_id = conversation_id
        self._on_call = on_call
        self._owner = lease_owner  # sweeps: status writes only while this worker holds the lease
        self._counters_written = 0.0
        self.counters = dict.fromkeys(COUNTER_NAMES, 0)
        self.spend = empty_spend()  # calls, tokens, dollars, seconds: the run's `spend` field
        self._call_seq = 0
        self._kept: list[dict] | None = None  # ledger rows that kept vectors, as last read
        # no run ever marked it running, so it holds no message, call or summary: nothing to
        # read back (a run that starts meanwhile elsewhere is caught by the unique ids)
        self._never_started = never_started
        self._writes: GroupCommit | None = None
        self._unheard: list[asyncio.Future] = []  # queued ledger outcomes, heard with a later write
        self.status: str | None = None  # as last marked by this run
        self.error: str | None = None

    def writes(self) -> GroupCommit:
        """The group commit of the running event loop (shared by a sweep's conversations)."""
        self._writes = self.store.group_commit()
        return self._writes

    def _flush_queued(self) -> None:
        """Before a synchronous write: whatever this recorder queued goes first, and a queued
        ledger outcome that failed fails this write too (it would have failed the run)."""
        if self._writes is not None:
            self._writes.flush_now()
        unheard, self._unheard = self._unheard, []
        failure = None
        for future in unheard:
            if not future.done():  # in a batch a server writes now: heard when it ends
                future.add_done_callback(_log_failure)
            elif not future.cancelled() and future.exception() is not None:
                failure = failure or future.exception()
        if failure is not None:
            raise failure

    def defer(self, future: asyncio.Future) -> None:
        """A queued write (a call's outcome) heard with the run's next awaited write."""
        self._unheard.append(future)

    async def unheard_writes(self) -> list[asyncio.Future]:
        """The deferred writes still to be heard, for the caller to await with its own write,
        which it queues after them. One a server is writing now (in a batch before the next)
        is heard first: nothing queued after it may be stored while it fails."""
        unheard, self._unheard = self._unheard, []
        writes = self._writes
        if writes is not None and any(not f.done() and not writes.is_queued(f) for f in unheard):
            await asyncio.gather(*unheard)
            return []
        return unheard

    async def _awaited(self, earlier: list[asyncio.Future], *futures: asyncio.Future) -> list:
        """The outcomes of `futures`, awaited together with the `earlier` deferred writes."""
        results = await asyncio.gather(*futures, *earlier)
        return results[: len(futures)]

    def load_progress(self) -> Progress:
        """The transcript so far: a fork's shared prefix (not counted: its parent's work), then
        what this run stored."""
        progress = Progress(list(self.shared.messages))
        progress.summaries = [s["text"] for s in self.shared.summaries]
        if self._never_started:
            return progress
        for doc in self.store.messages.for_conversation(self.conversation_id):
            progress.messages.append(doc)
            self._count_message(doc)
        summaries = self.store.conversations.summaries(self.conversation_id)
        progress.summaries += [s["text"] for s in summaries]
        self.counters["summaries"] = len(summaries)
        progress.calls = self.load_calls()
        return progress

    def load_calls(self) -> list[dict]:
        """The run's stored ledger rows: counted, and the next `seq` continues after them."""
        if self._never_started:
            return []
        calls = self.store.calls.for_conversation(self.conversation_id)
        self._kept = [c for c in calls if "vectors" in c]  # for `stored_embeddings`
        self._call_seq = max((c["seq"] for c in calls), default=0)
        for call in calls:
            self._count_call(call)
        return calls

    def load_rows(self, collection: str) -> list[dict]:
        """A step world's rows in `collection`: a fork's shared ones (read from its parent:
        steps before its fork point), then the rows this run stored."""
        return [*self.shared.rows, *self.store.rows(collection).for_run(self.conversation_id)]

    def mark(
        self,
        status: str,
        error: str | None = None,
        summaries: list[str] | None = None,
        **fields: object,
    ) -> None:
        """Status, counters and (at the end) the world's closing fields, e.g. a chat's summary
        list after a resume, a probe's interviews: one write."""
        self._flush_queued()
        also: dict = {"counters": dict(self.counters), "spend": dict(self.spend), **fields}
        if summaries is not None:
            also["summaries"] = _listed(summaries)
        self.store.conversations.set_status(self.conversation_id, status, error, self._owner, also)
        self.status, self.error = status, error

    def prompt_hash(self, messages: list[dict]) -> str:
        return self.store.calls.prompt_hash(messages)

    def call_recorder(
        self,
        purpose: str,
        day: int,
        index: int,
        agent: str | None,
        choice: LLMChoice,
        messages: list[dict],
        params: GenerationParams,
        base_url: str | None = None,
        prompt_hash: str | None = None,
    ) -> CallLedger:
        """An `on_attempt` ledger that writes one row per attempt, before the request leaves.

        `index` is the position within the day of the message the call serves (for a summary,
        the day's message count); `base_url` is the endpoint actually called; `prompt_hash`
        the messages' hash when the caller has it already.
        """
        digest = prompt_hash or self.prompt_hash(messages)
        fixed = {
            "conversation_id": self.conversation_id,
            "purpose": purpose,
            "day": day,
            "index": index,
            "agent": agent,
            "model": choice.model,
            # the experiment's name for the entry (its label, else the model string): the same
            # model may be listed twice with different sampling parameters
            "llm_label": choice.key,
            "base_url": redacted(base_url or choice.base_url),  # never a password in the DB
            "params": params.as_dict(),
            "prompt_hash": digest,
        }
        return CallLedger(self, fixed, messages, price_of(choice))

    def embedding_recorder(
        self, step: int, index: int, agent: str | None, embedder: str, keep_vectors: bool
    ) -> EmbeddingLedger:
        """The `RequestLedger` of one embedding (llm/embeddings.py): a ledger row per request
        the embedder sends, priced by the embedder's model (engine/embedding_ledger.py)."""
        parsed_url = embedder.partition("@")[2] or None
        fixed = embedding_fixed(
            self.conversation_id,
            step,
            index,
            agent,
            redacted(embedder),
            redacted(parsed_url) if parsed_url else None,
        )
        return EmbeddingLedger(self, fixed, price_for(priced_as(embedder)), keep_vectors)

    def stored_embeddings(self) -> list[tuple[list[str], np.ndarray]]:
        """The texts and vectors of this run's embedding requests that kept them (a resume)."""
        if self._never_started:
            return []
        calls = self.store.calls
        rows = self._kept
        if rows is None:  # the ledger not read yet by this recorder
            rows = calls.for_conversation(self.conversation_id)
        return kept_vectors(rows, calls.prompt)

    def next_call_seq(self) -> int:
        self._call_seq += 1
        return self._call_seq

    def resync_call_seq(self) -> None:
        """Another run wrote calls of this conversation (a lease takeover): continue after them."""
        self._call_seq = max(self._call_seq, self.store.calls.max_seq(self.conversation_id))

    def count_call(self, doc: dict) -> None:
        self._count_call(doc)
        if self._on_call is not None:
            self._on_call(doc)

    async def record_message(self, doc: dict) -> None:
        """Insert a message; a message already stored at that place means another worker has
        taken this conversation over, so this run must stop rather than fork the transcript."""
        full = self.store.messages.document(
            {"conversation_id": self.conversation_id, "created_at": now(), **doc}
        )
        earlier = await self.unheard_writes()
        (stored,) = await self._awaited(earlier, self.writes().insert("messages", full))
        if not stored:
            raise TranscriptTaken(
                f"message {doc['index'] + 1} of day {doc['day']} of {self.conversation_id} was "
                "already stored by another run"
            )
        self._count_message(full)
        await self._write_counters()

    async def record_edit(self, edit: ForkEdit, doc: dict, in_ledger: bool) -> None:
        """A fork's edited message: a ledger row saying the researcher wrote it (unless a killed
        run already stored that row: `in_ledger`), then the message itself, marked."""
        if not in_ledger:
            for future in await self.unheard_writes():
                await future
            row = edit.ledger_row(self.conversation_id, now())
            for _ in range(100):
                document = self.store.calls.row(self.conversation_id, self.next_call_seq(), row)
                if await self.writes().insert("calls", document):
                    break
                self.resync_call_seq()
        await self.record_message(doc)

    async def record_step_rows(self, rows: list[dict], already: set[str], collection: str) -> None:
        """A world step's rows (one per agent) together, into the world's `collection`; rows
        whose ids are in `already` were stored by a killed run of this step and are skipped.
        Any other clash means another worker took the run over: stop rather than fork it."""
        moment = now()
        repository = self.store.rows(collection)
        docs = [repository.document({**row, "created_at": moment}) for row in rows]
        docs = [doc for doc in docs if doc["_id"] not in already]
        earlier = await self.unheard_writes()
        writes = self.writes()
        stored = await self._awaited(earlier, *(writes.insert(collection, doc) for doc in docs))
        if not all(stored):
            raise TranscriptTaken(
                f"a step of {self.conversation_id} ({collection}) was already stored by another run"
            )
        self.counters["messages"] += len(rows)
        await self._write_counters()

    async def record_summary(
        self, day: int, text: str, raw: str, model: str, all_texts: list[str]
    ) -> None:
        """The day's summary on its own, then the whole list and the counters on the
        conversation (no $push: see DESIGN); a summary already stored (a rerun) stays."""
        summary = {
            "_id": f"{self.conversation_id}-d{day:03d}",
            "conversation_id": self.conversation_id,
            "day": day,
            "text": text,
            "raw_text": raw,
            "model": model,
            "created_at": now(),
            "schema_version": 1,
        }
        self.counters["summaries"] = len(all_texts)
        earlier = await self.unheard_writes()
        writes = self.writes()
        await self._awaited(earlier, writes.insert("summaries", summary))
        guard = self.store.conversations.guard(self.conversation_id, self._owner)
        fields = {
            "summaries": _listed(all_texts),
            "counters": dict(self.counters),
            "spend": dict(self.spend),
        }
        await writes.update("conversations", guard, fields)

    def load_memories(self, agent_index: int) -> StoredStream:
        return self.store.memories.load(self.conversation_id, agent_index)

    def store_memories(
        self, records: Sequence[MemoryRecord], vectors: np.ndarray, embedder: str
    ) -> int:
        return self.store.memories.insert(records, vectors, embedder)

    def touch_memories(self, ids: list[str], minute: int) -> None:
        self.store.memories.touch(ids, minute)

    @property
    def unreachable(self) -> StoreUnavailable | None:
        """The outage that left the store unreachable (no write waits for it), else None."""
        return self.store.unreachable

    def outage(self, exc: BaseException) -> StoreUnavailable | None:
        """The store outage behind `exc` (a full disk, a server gone), else None."""
        return self.store.outage(exc)

    async def _write_counters(self, every_s: float = 5.0) -> None:
        """Counters for progress displays, at most every 5 s per conversation: rewriting the
        conversation document after every message cost more than the message itself. They are
        exact at every status change (`mark`) and recounted from the messages on resume."""
        moment = time.monotonic()
        if moment - self._counters_written >= every_s:
            self._counters_written = moment
            guard = self.store.conversations.guard(self.conversation_id, self._owner)
            earlier = await self.unheard_writes()
            fields = {"counters": dict(self.counters), "spend": dict(self.spend)}
            await self._awaited(earlier, self.writes().update("conversations", guard, fields))

    def _count_message(self, doc: dict) -> None:
        self.counters["messages"] += 1
        self.counters["trimmed"] += int(bool(doc.get("trimmed")))
        self.counters["empty"] += int(bool(doc.get("empty")))
        self.counters["fallbacks"] += int(bool(doc.get("speaker_fallback")))

    def _count_call(self, doc: dict) -> None:
        if doc.get("purpose") == EDIT_PURPOSE:  # the researcher's text: no model was called
            return
        self.counters["calls"] += 1
        self.counters["failed_calls"] += int(doc.get("error") is not None)
        self.counters["tokens_in"] += doc.get("tokens_in") or 0
        self.counters["tokens_out"] += doc.get("tokens_out") or 0
        spent = call_spend(doc)
        if spent is not None:
            add_spend(self.spend, spent)


def _listed(summaries: list[str]) -> list[dict]:
    """A conversation's summary list as stored on it: one entry per day."""
    return [{"day": i + 1, "text": text} for i, text in enumerate(summaries)]


def _log_failure(future: asyncio.Future) -> None:
    """A deferred ledger write that failed after its run was marked: the row stays in flight,
    as a kill -9 would leave it; say so rather than drop the error."""
    if not future.cancelled() and future.exception() is not None:
        logging.getLogger(__name__).warning(
            "a ledger outcome could not be stored: %s", future.exception()
        )
