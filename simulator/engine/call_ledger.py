"""One call's ledger rows: stored as in flight before its request leaves (the spend cap is
checked first), completed with its outcome after; apart from the recorder (engine/recorder.py),
which makes one per call and answers what it asks of the run (its seq, its writes, its spend).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable
from datetime import datetime
from typing import TYPE_CHECKING

from simulator.domain.budget import call_cost
from simulator.domain.pricing import Price
from simulator.engine import budget
from simulator.llm.retry import Attempt
from simulator.logs import CALLS_LOGGER, SECRET_VARIABLES, redact

if TYPE_CHECKING:
    from simulator.engine.recorder import StoreRecorder

calls_log = logging.getLogger(CALLS_LOGGER)


class CallLedger:
    """Ledger rows of one call: `begin` stores the attempt as in flight before the request is
    sent (so a kill -9 leaves it on record with no response); the call fills it in after.

    Writes go through the store's group commit (store/group_commit.py): the request leaves
    only once its row is stored (awaited). A call's outcome is queued, not awaited: the next
    write of the run (the message the call produced, the next row) is awaited together with it,
    in the same batch after it (group_commit.ORDER), so the message is stored only with its row
    complete, and a turn waits for one flush instead of two."""

    def __init__(
        self,
        recorder: StoreRecorder,
        fixed: dict,
        messages: list[dict],
        price: Price | None = None,
    ):
        self._recorder = recorder
        self._price = price  # None: unknown, so each attempt's money is unknown
        self._fixed = fixed
        self._messages: list[dict] | None = messages  # the prompt, stored with the first row
        self._rows: dict[int, str] = {}  # attempt number -> ledger row id

    async def begin(self, number: int, started_at: datetime) -> None:
        cap = budget.current()
        if cap is not None:  # a cap reached stops the run here, before anything is sent
            cap.check(self._recorder.spend)
        row = {
            **self._fixed,
            "attempt": number,
            "state": "in_flight",
            "response": None,
            "error": None,
            "error_kind": None,
            "created_at": started_at,
        }
        recorder = self._recorder
        prompt = None
        if self._messages is not None:  # built now, not when the call was queued (memory)
            calls = recorder.store.calls
            prompt = calls.prompt_document_for(self._fixed["prompt_hash"], self._messages)
            self._messages = None
        # queued with the row, in the same flush: the prompts group goes out first, and a
        # failure there fails the row too (group_commit.ORDER)
        earlier = await recorder.unheard_writes()
        stored = recorder.writes().insert("prompts", prompt) if prompt is not None else None
        try:
            await self._insert(row, number, earlier)
        finally:
            if stored is not None and stored.done() and not stored.cancelled():
                stored.exception()  # its outcome is the row's: heard there
        if prompt is not None:
            recorder.store.calls.remember_prompt(prompt["_id"])

    def row_id(self, number: int) -> str | None:
        """The ledger row of attempt `number` once `begin` stored it (None before)."""
        return self._rows.get(number)

    def __call__(self, attempt: Attempt) -> Awaitable[None] | None:
        completion = attempt.completion
        outcome = {
            "state": "done" if attempt.error is None else "failed",
            "response": completion.text if completion else None,
            "tokens_in": completion.tokens_in if completion else None,
            "tokens_out": completion.tokens_out if completion else None,
            "latency_s": round(attempt.latency_s, 4),
            "cost": call_cost(
                self._price,
                completion is not None,
                completion.tokens_in if completion else None,
                completion.tokens_out if completion else None,
            ),
            "waited_s": round(attempt.waited_s, 4),
            "model_identity": redacted(completion.model_identity) if completion else None,
            "ignored_params": completion.ignored_params if completion else [],
            "error": redact(attempt.error) if attempt.error else attempt.error,
            "error_kind": attempt.error_kind,
        }
        row_id = self._rows.pop(attempt.number, None)
        if attempt.error_kind == "cancelled" and row_id is not None:
            # no awaiting inside a cancellation: queued after the row's insert, written by the
            # next flush (at the latest when the recorder marks the conversation interrupted)
            self._recorder.writes().update("calls", {"_id": row_id}, outcome)
            self._recorder.count_call(
                {**self._fixed, "_id": row_id, "attempt": attempt.number, **outcome}
            )
            return None
        return self._complete(attempt, row_id, outcome)

    async def _complete(self, attempt: Attempt, row_id: str | None, outcome: dict) -> None:
        if row_id is None:  # a caller that did not announce the attempt
            doc = {**self._fixed, "attempt": attempt.number, "created_at": attempt.started_at}
            doc.update(outcome)
            doc["_id"] = await self._insert(doc, attempt.number)
        else:  # heard with the run's next write (the class docstring)
            self._recorder.defer(self._recorder.writes().update("calls", {"_id": row_id}, outcome))
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

    async def _insert(self, row: dict, number: int, earlier: list | None = None) -> str:
        """Insert with the next `seq`; a clash means another run of this conversation wrote
        calls meanwhile (lease takeover), so continue after the highest stored `seq`. The row
        id is known before the write, so a cancellation while it is queued still completes it."""
        recorder = self._recorder
        for _ in range(100):
            document = recorder.store.calls.row(
                recorder.conversation_id, recorder.next_call_seq(), row
            )
            self._rows[number] = document["_id"]
            stored = recorder.writes().insert("calls", document)
            if earlier:  # queued before this row, heard with it
                await asyncio.gather(stored, *earlier)
                earlier = None
            if await stored:
                row["seq"] = document["seq"]
                return document["_id"]
            recorder.resync_call_seq()
        raise RuntimeError(f"could not allocate a ledger seq for {recorder.conversation_id}")


def redacted(value, secrets: tuple | None = None):
    """`value` with passwords, keys and tokens taken out of every string in it: an endpoint
    such as http://user:pw@host reaches the ledger as http://user:***@host."""
    if secrets is None:
        secrets = tuple(os.environ.get(name) for name in SECRET_VARIABLES)
    if isinstance(value, str):
        return _redact_short(value, secrets)
    if isinstance(value, dict):
        return {key: redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [redacted(item, secrets) for item in value]
    return value


_REDACTED: dict[tuple, str] = {}  # short strings seen per call (URLs, model names), redacted


def _redact_short(text: str, secrets: tuple) -> str:
    """`redact`, remembered for the short strings every call repeats (its endpoint, model and
    provider): the same text under the same values of the secret variables (`secrets`)
    redacts the same way."""
    if len(text) > 512:
        return redact(text)
    key = (text, secrets)
    done = _REDACTED.get(key)
    if done is None:
        if len(_REDACTED) >= 4096:
            _REDACTED.clear()
        done = _REDACTED[key] = redact(text)
    return done
