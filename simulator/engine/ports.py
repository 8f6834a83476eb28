"""What the engine needs from where runs are kept, named for what it does.

The worlds' runs, the step loop and the memory keeper write and read through a `Recorder` (one
run's: its transcript or rows, its call ledger, its status and counters, its agents' memory
streams); the sweep runner claims and heartbeats through `Leases`. Neither names a database:
`engine/recorder.py`'s StoreRecorder is the recorder on the store, and the services hand the
sweep runner the store's leases (services/sweep_leases.py). A test may hand in any object with
these methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from simulator.domain.fork import ForkEdit
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.errors import StoreUnavailable
from simulator.llm.embeddings import RequestLedger
from simulator.llm.retry import AttemptLedger
from simulator.memory.domain.records import MemoryRecord

if TYPE_CHECKING:  # numpy comes with the memories written
    import numpy as np


class TranscriptTaken(Exception):
    """Another worker wrote this run's next message (or step) first."""


@dataclass
class Progress:
    """What a run already holds, so a resumed run continues exactly where it stopped: its
    messages (a fork's shared prefix first, each carrying the id of the run that stored it),
    its day summaries (texts, the shared ones first) and its call ledger."""

    messages: list[dict] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)  # the ledger, for replaying finished calls


class StoredMemories(Protocol):
    """An agent's stored memory records in stream order, each with its vector (None where none
    was stored yet)."""

    records: list[MemoryRecord]
    vectors: list[np.ndarray | None]


class MemoryShelf(Protocol):
    """Where one run's memory streams are kept (the memory keeper's only way to them)."""

    def load_memories(self, agent_index: int) -> StoredMemories:
        """An agent's stored stream, in stream order, with its vectors."""
        ...

    def store_memories(
        self, records: Sequence[MemoryRecord], vectors: np.ndarray, embedder: str
    ) -> int:
        """Store the records not stored yet (row i of `vectors` for record i); how many were."""
        ...

    def touch_memories(self, ids: list[str], minute: int) -> None:
        """Mark records accessed at simulated minute `minute` (never moved backwards)."""
        ...

    def embedding_recorder(
        self, step: int, index: int, agent: str | None, embedder: str, keep_vectors: bool
    ) -> RequestLedger:
        """The ledger of one embedding by `embedder` (its name) at (step, index): a row per
        request sent, the spend cap checked before each leaves; `keep_vectors` keeps the
        vectors on the row (recall queries: nothing else stores them)."""
        ...

    def stored_embeddings(self) -> list[tuple[list[str], np.ndarray]]:
        """The texts and vectors kept by this run's embedding rows, for a resume."""
        ...


class Recorder(MemoryShelf, Protocol):
    """One run as the engine writes and reads it: every message, row and call the moment it
    exists, the status at each change, and what a resumed run reads back."""

    counters: dict[str, int]  # messages, calls, tokens, ...: written with the status
    error: str | None  # as last marked by this run

    # what the run already stored (a resume)
    def load_progress(self) -> Progress:
        """The transcript so far and the ledger (this run's messages counted)."""
        ...

    def load_calls(self) -> list[dict]:
        """The run's ledger rows, counted; the next call continues after them."""
        ...

    def load_rows(self, collection: str) -> list[dict]:
        """A step world's rows in `collection`: a fork's shared ones (its parent's, each
        carrying the id of the run that stored it), then this run's."""
        ...

    # as the run goes
    def mark(
        self,
        status: str,
        error: str | None = None,
        summaries: list[str] | None = None,
        **fields: object,
    ) -> None:
        """Status, counters and (at the end) the world's closing fields: one write."""
        ...

    def prompt_hash(self, messages: list[dict]) -> str:
        """The hash that names a prompt in the ledger."""
        ...

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
    ) -> AttemptLedger:
        """The `on_attempt` of one call: a ledger row per attempt, before the request leaves."""
        ...

    async def record_message(self, doc: dict) -> None:
        """A chat message; TranscriptTaken when another run stored that place first."""
        ...

    async def record_edit(self, edit: ForkEdit, doc: dict, in_ledger: bool) -> None:
        """A fork's edited message, with the ledger row saying the researcher wrote it."""
        ...

    async def record_summary(
        self, day: int, text: str, raw: str, model: str, all_texts: list[str]
    ) -> None:
        """A day's summary, and the whole list on the run."""
        ...

    async def record_step_rows(self, rows: list[dict], already: set[str], collection: str) -> None:
        """A world step's rows (one per agent) together, into `collection`; rows whose ids are
        in `already` were stored by a killed run of this step. TranscriptTaken on any other
        clash."""
        ...

    # the store's health
    @property
    def unreachable(self) -> StoreUnavailable | None:
        """The outage that left the store unreachable (no write waits for it), else None."""
        ...

    def outage(self, exc: BaseException) -> StoreUnavailable | None:
        """The store outage behind `exc` (a full disk, a server gone), else None."""
        ...


class Leases(Protocol):
    """A sweep's runs as workers claim them: each under a lease that a heartbeat renews and
    that expires when its worker dies, so another worker takes the run over."""

    def worker_name(self) -> str:
        """A new name for a worker of this process (dead local workers' leases expire)."""
        ...

    def expire_dead(self, sweep_id: str) -> int:
        """Expire the leases of dead workers on this machine; how many."""
        ...

    def claimable(self, sweep_id: str) -> list[str]:
        """A batch of runs of the sweep that a worker may claim now."""
        ...

    def claim(self, run_id: str, worker: str, ttl_ms: int) -> dict | None:
        """The run's document, claimed by `worker`; None when another worker was first."""
        ...

    def heartbeat(self, run_id: str, worker: str, ttl_ms: int) -> bool:
        """Renew the lease; False when `worker` no longer holds it."""
        ...

    def release(self, run_id: str, worker: str) -> None: ...

    def fail(self, run_id: str, error: str, worker: str) -> None:
        """Mark a run that crashed as failed (while `worker` holds it)."""
        ...

    def status_counts(self, sweep_id: str) -> dict[str, int]:
        """How many runs of the sweep are in each status."""
        ...

    @property
    def unreachable(self) -> StoreUnavailable | None: ...

    def outage(self, exc: BaseException) -> StoreUnavailable | None: ...
