"""The recorder: every message and every call is written the moment it exists."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from simulator.domain.experiment import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.llm.retry import Attempt
from simulator.logs import CALLS_LOGGER, redact
from simulator.prompting.transcript import Line
from simulator.store.clock import now
from simulator.store.store import Store

calls_log = logging.getLogger(CALLS_LOGGER)

COUNTER_NAMES = (
    "messages",
    "calls",
    "failed_calls",
    "tokens_in",
    "tokens_out",
    "trimmed",
    "empty",
    "fallbacks",
    "summaries",
)


class CallLedger:
    """Ledger rows of one call: `begin` stores the attempt as in flight before the request is
    sent (so a kill -9 leaves it on record with no response); the call fills it in after."""

    def __init__(self, recorder: StoreRecorder, fixed: dict):
        self._recorder = recorder
        self._fixed = fixed
        self._rows: dict[int, str] = {}  # attempt number -> ledger row id

    def begin(self, number: int, started_at: datetime) -> None:
        row = {
            **self._fixed,
            "attempt": number,
            "state": "in_flight",
            "response": None,
            "error": None,
            "error_kind": None,
            "created_at": started_at,
        }
        self._rows[number] = self._insert(row)

    def __call__(self, attempt: Attempt) -> None:
        completion = attempt.completion
        outcome = {
            "state": "done" if attempt.error is None else "failed",
            "response": completion.text if completion else None,
            "tokens_in": completion.tokens_in if completion else None,
            "tokens_out": completion.tokens_out if completion else None,
            "latency_s": round(attempt.latency_s, 4),
            "waited_s": round(attempt.waited_s, 4),
            "model_identity": _redacted(completion.model_identity) if completion else None,
            "ignored_params": completion.ignored_params if completion else [],
            "error": redact(attempt.error) if attempt.error else attempt.error,
            "error_kind": attempt.error_kind,
        }
        row_id = self._rows.pop(attempt.number, None)
        calls = self._recorder.store.calls
        if row_id is None:  # a caller that did not announce the attempt
            doc = {**self._fixed, "attempt": attempt.number, "created_at": attempt.started_at}
            doc.update(outcome)
            doc["_id"] = self._insert(doc)
        else:
            calls.complete(row_id, outcome)
            doc = {**self._fixed, "_id": row_id, "attempt": attempt.number, **outcome}
        self._recorder.count_call(doc)
        if calls_log.isEnabledFor(logging.DEBUG):  # off unless SIM_LOG_CALLS=1: see logs.py
            calls_log.debug(
                "%s attempt %d %s %s at %s: %s in %.0f ms (%s tokens out)%s",
                doc["_id"],
                attempt.number,
                self._fixed["purpose"],
                self._fixed["model"],
                self._fixed["base_url"],
                outcome["state"],
                attempt.latency_s * 1000,
                outcome["tokens_out"],
                f": {attempt.error}" if attempt.error else "",
            )

    def _insert(self, row: dict) -> str:
        """Insert with the next `seq`; a clash means another run of this conversation wrote
        calls meanwhile (lease takeover), so continue after the highest stored `seq`."""
        recorder = self._recorder
        for _ in range(100):
            seq = recorder.next_call_seq()
            if recorder.store.calls.insert_at(recorder.conversation_id, seq, row):
                row["seq"] = seq
                return f"{recorder.conversation_id}-c{seq:06d}"
            recorder.resync_call_seq()
        raise RuntimeError(f"could not allocate a ledger seq for {recorder.conversation_id}")


class TranscriptTaken(Exception):
    """Another worker wrote this conversation's next message first."""


@dataclass
class Progress:
    """What a conversation already holds, so a resumed run continues exactly where it stopped."""

    lines_by_day: dict[int, list[Line]] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    messages: int = 0
    last_speaker: str | None = None


class StoreRecorder:
    def __init__(
        self,
        store: Store,
        conversation_id: str,
        on_call: Callable[[dict], None] | None = None,
        lease_owner: str | None = None,
    ):
        self.store = store
        self.conversation_id = conversation_id
        self._on_call = on_call
        self._owner = lease_owner  # sweeps: status writes only while this worker holds the lease
        self._counters_written = 0.0
        self.counters = dict.fromkeys(COUNTER_NAMES, 0)
        self._call_seq = 0

    def load_progress(self) -> Progress:
        progress = Progress()
        for doc in self.store.messages.for_conversation(self.conversation_id):
            progress.lines_by_day.setdefault(doc["day"], []).append(
                Line(doc["speaker"], doc["text"])
            )
            progress.messages += 1
            progress.last_speaker = doc["speaker"]
            self._count_message(doc)
        summaries = self.store.conversations.summaries(self.conversation_id)
        progress.summaries = [s["text"] for s in summaries]
        self.counters["summaries"] = len(summaries)
        calls = self.store.calls.for_conversation(self.conversation_id)
        self._call_seq = max((c["seq"] for c in calls), default=0)
        for call in calls:
            self._count_call(call)
        return progress

    def mark(self, status: str, error: str | None = None) -> None:
        self.store.conversations.set_status(self.conversation_id, status, error, self._owner)
        self.store.conversations.set_counters(
            self.conversation_id, dict(self.counters), self._owner
        )

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
    ) -> CallLedger:
        """An `on_attempt` ledger that writes one row per attempt, before the request leaves.

        `index` is the position within the day of the message the call serves (for a summary,
        the day's message count); `base_url` is the endpoint actually called.
        """
        digest = self.store.calls.store_prompt(messages)
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
            "base_url": _redacted(base_url or choice.base_url),  # never a password in the DB
            "params": params.as_dict(),
            "prompt_hash": digest,
        }
        return CallLedger(self, fixed)

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

    def record_message(self, doc: dict) -> None:
        """Insert a message; a message already stored at that place means another worker has
        taken this conversation over, so this run must stop rather than fork the transcript."""
        full = {"conversation_id": self.conversation_id, "created_at": now(), **doc}
        if not self.store.messages.insert(full):
            raise TranscriptTaken(
                f"message {doc['index'] + 1} of day {doc['day']} of {self.conversation_id} was "
                "already stored by another run"
            )
        self._count_message(full)
        self._write_counters()

    def record_summary(
        self, day: int, text: str, raw: str, model: str, all_texts: list[str]
    ) -> None:
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
        listed = [{"day": i + 1, "text": t} for i, t in enumerate(all_texts)]
        self.store.conversations.add_summary(self.conversation_id, summary, listed)
        self.counters["summaries"] = len(all_texts)
        self.store.conversations.set_counters(
            self.conversation_id, dict(self.counters), self._owner
        )

    def _write_counters(self, every_s: float = 5.0) -> None:
        """Counters for progress displays, at most every 5 s per conversation: rewriting the
        conversation document after every message cost more than the message itself. They are
        exact at every status change (`mark`) and recounted from the messages on resume."""
        moment = time.monotonic()
        if moment - self._counters_written >= every_s:
            self._counters_written = moment
            self.store.conversations.set_counters(
                self.conversation_id, dict(self.counters), self._owner
            )

    def sync_summaries(self, texts: list[str]) -> None:
        """After a resume the conversation's summary list may lag the summaries collection."""
        listed = [{"day": i + 1, "text": t} for i, t in enumerate(texts)]
        self.store.conversations.set_summaries(self.conversation_id, listed)

    def _count_message(self, doc: dict) -> None:
        self.counters["messages"] += 1
        self.counters["trimmed"] += int(bool(doc.get("trimmed")))
        self.counters["empty"] += int(bool(doc.get("empty")))
        self.counters["fallbacks"] += int(bool(doc.get("speaker_fallback")))

    def _count_call(self, doc: dict) -> None:
        self.counters["calls"] += 1
        self.counters["failed_calls"] += int(doc.get("error") is not None)
        self.counters["tokens_in"] += doc.get("tokens_in") or 0
        self.counters["tokens_out"] += doc.get("tokens_out") or 0


def _redacted(value):
    """`value` with passwords, keys and tokens taken out of every string in it: an endpoint
    such as http://user:pw@host reaches the ledger as http://user:***@host."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value
