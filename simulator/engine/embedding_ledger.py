"""Ledger rows of embedding requests: each request a memory stream's embedder sends gets a row
before it leaves (after the spend cap's check) and its outcome after, as a chat call does.

A row says what the request sent (its prompt: the texts), the tokens the server counted (or an
approximation, flagged `tokens_approximate`), no tokens out, the seconds and the dollars at the
embedder's price. Rows of recall queries also keep the vectors that came back (`vectors`:
little-endian float32 bytes, `dim` per row), so a resumed run takes them from the ledger
instead of sending the same texts again; a record's vector is kept with the record itself
(memories), so a records request keeps none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator.domain.budget import call_cost
from simulator.domain.clock import now
from simulator.domain.embedding_rows import (
    EMBEDDING_PURPOSE,
    approximate_tokens,
    embedding_messages,
    is_embedding,
)
from simulator.domain.pricing import Price
from simulator.engine.call_ledger import CallLedger
from simulator.llm.embeddings import EmbeddingAttempt
from simulator.logs import redact

if TYPE_CHECKING:
    import numpy as np

    from simulator.engine.recorder import StoreRecorder


class EmbeddingLedger:
    """The `RequestLedger` (llm/embeddings.py) of one embedding of a run's memory stream: a
    ledger row per request the embedder sends (cache hits send none)."""

    def __init__(self, recorder: StoreRecorder, fixed: dict, price: Price | None, keep: bool):
        self._recorder, self._fixed, self._price, self._keep = recorder, fixed, price, keep
        self._call: CallLedger | None = None
        self._row: dict = {}

    async def begin(self, texts: list[str]) -> None:
        recorder = self._recorder
        messages = embedding_messages(texts)
        self._row = {**self._fixed, "prompt_hash": recorder.prompt_hash(messages)}
        self._row["texts"] = len(texts)
        self._call = CallLedger(recorder, self._row, messages, self._price)
        await self._call.begin(1, now())  # the cap's check, then the row in flight

    def done(self, attempt: EmbeddingAttempt) -> None:
        call, self._call = self._call, None
        if call is None:  # `begin` never stored a row (a refusal): nothing to complete
            return
        ok = attempt.error is None
        tokens = attempt.tokens_in
        approximate = ok and tokens is None
        if approximate:
            tokens = approximate_tokens(attempt.texts)
        outcome = {
            "state": "done" if ok else "failed",
            "response": None,
            "tokens_in": tokens,
            "tokens_out": 0 if ok else None,
            "tokens_approximate": approximate,
            "latency_s": round(attempt.latency_s, 4),
            "cost": call_cost(self._price, ok, tokens, 0),
            "waited_s": 0.0,
            "model_identity": None,
            "ignored_params": [],
            "error": redact(attempt.error) if attempt.error else None,
            "error_kind": attempt.error_kind,
        }
        if ok and self._keep and attempt.vectors is not None and len(attempt.vectors):
            outcome.update(vector_fields(attempt.vectors))
        recorder = self._recorder
        row_id = call.row_id(1)
        if row_id is None:
            return
        update = recorder.writes().update("calls", {"_id": row_id}, outcome)
        if attempt.error_kind != "cancelled":  # no awaiting in a cancellation (CallLedger)
            recorder.defer(update)
        recorder.count_call({**self._row, "_id": row_id, "attempt": 1, **outcome})


def embedding_fixed(
    conversation_id: str, step: int, index: int, agent: str | None, embedder: str, base_url
) -> dict:
    """What every row of one embedding holds besides its outcome."""
    return {
        "conversation_id": conversation_id,
        "purpose": EMBEDDING_PURPOSE,
        "day": step,
        "index": index,
        "agent": agent,
        "model": embedder,
        "llm_label": "memory.embedder",
        "base_url": base_url,
        "params": {},
    }


def vector_fields(vectors: np.ndarray) -> dict:
    import numpy as np

    matrix = np.asarray(vectors, dtype="<f4")
    return {"vectors": matrix.tobytes(), "dim": int(matrix.shape[1])}


def kept_vectors(rows: list[dict], prompt_of) -> list[tuple[list[str], np.ndarray]]:
    """(texts, vectors) of the embedding rows that kept their vectors, in ledger order;
    `prompt_of(hash)` gives a row's stored prompt."""
    import numpy as np

    found = []
    for row in rows:
        raw, dim = row.get("vectors"), row.get("dim")
        if not is_embedding(row) or row.get("state") != "done" or not raw or not dim:
            continue
        texts = [m.get("content", "") for m in prompt_of(row["prompt_hash"])]
        matrix = np.frombuffer(bytes(raw), dtype="<f4").astype(np.float32)
        if texts and matrix.size == len(texts) * int(dim):
            found.append((texts, matrix.reshape(len(texts), int(dim))))
    return found
