"""Actors' calls of a world step: at once, each in the ledger as it happens, none sent twice.

Worlds where many agents act in the same step (the 2D community, the opinion network) send a
stage's calls together: the endpoint pools of LLMAccess bound how many are in flight, and the
HF backend batches what arrives together; the chat sends one actor's call per step. A resumed
run never repeats a call whose result is stored: the ledger's finished rows are replayed when
the same actor asks the same prompt again at the same place (step, index, purpose). The prompt
is a pure function of the stored state, so a resumed run asks it again exactly.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.engine.ports import Recorder
from simulator.engine.step_loop import StepFailed
from simulator.llm.access import LLMAccess
from simulator.llm.base import BackendError, Completion

REPLAYED = "replayed_calls"  # counter: calls answered from the ledger on resume, not resent


@dataclass(frozen=True)
class ActorCall:
    """One call of a step: where it sits (step, index: the actor's index in a stage, the
    message's place in a chat's day), who makes it (None: the world itself, e.g. a summary),
    through which model, and what it sends; `label` names it in a failure message."""

    purpose: str
    step: int
    index: int
    agent: str | None
    llm: LLMChoice
    messages: list[dict]
    params: GenerationParams
    label: str


def placed_params(
    params: GenerationParams, seed: int | None, purpose: str, step: int, agent: int, index: int
) -> GenerationParams:
    """`params` with a run seed's own seed for the call at (purpose, step, agent, index),
    derived by hashing where it sits (unchanged when the run has no seed)."""
    if seed is None:
        return params
    where = hashlib.sha256(f"{purpose}:{step}:{agent}:{index}".encode()).digest()
    offset = int.from_bytes(where[:4], "little")
    return params.merge(GenerationParams(seed=(seed + offset) % 2**32))


@dataclass(frozen=True)
class Reply:
    """A call's answer, sent now or taken from the ledger of an earlier, killed run."""

    text: str
    latency_s: float
    tokens_in: int | None
    tokens_out: int | None
    replayed: bool

    @classmethod
    def sent(cls, completion: Completion) -> Reply:
        return cls(
            completion.text,
            completion.latency_s,
            completion.tokens_in,
            completion.tokens_out,
            False,
        )

    @classmethod
    def from_ledger(cls, row: dict) -> Reply:
        latency = row.get("latency_s") or 0.0
        return cls(row["response"], latency, row.get("tokens_in"), row.get("tokens_out"), True)


ReplayKey = tuple[str, int, int, str, str]  # purpose, step, index, agent, prompt hash


def replay_book(calls: Sequence[dict]) -> dict[ReplayKey, dict]:
    """Finished ledger rows of a run by their place and prompt: the latest answer wins."""
    book: dict[ReplayKey, dict] = {}
    for call in calls:
        if call.get("state") == "done" and call.get("response") is not None:
            key = (
                call["purpose"],
                call["day"],
                call["index"],
                call.get("agent") or "",
                call["prompt_hash"],
            )
            book[key] = call
    return book


class ActorCalls:
    """Sends a step's calls concurrently, recording each in the ledger or replaying it."""

    def __init__(
        self,
        recorder: Recorder,
        llms: LLMAccess,
        replay: dict[ReplayKey, dict] | None = None,
    ):
        self._recorder = recorder
        self._llms = llms
        self._replay = replay or {}

    async def run(self, calls: Sequence[ActorCall]) -> list[Reply]:
        """Every call, in the order given; the first failure fails the step (the others still
        finish and stay in the ledger, so a rerun replays them)."""
        results = await asyncio.gather(*(self.one(c) for c in calls), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return list(results)  # type: ignore[arg-type]

    async def one(self, call: ActorCall) -> Reply:
        recorder = self._recorder
        digest = recorder.prompt_hash(call.messages)
        key = (call.purpose, call.step, call.index, call.agent or "", digest)
        stored = self._replay.pop(key, None)
        if stored is not None:
            counters = recorder.counters
            counters[REPLAYED] = counters.get(REPLAYED, 0) + 1
            return Reply.from_ledger(stored)
        backend = self._llms.get(call.llm)
        on_attempt = recorder.call_recorder(
            call.purpose,
            call.step,
            call.index,
            call.agent,
            call.llm,
            call.messages,
            call.params,
            backend.base_url,
            prompt_hash=digest,
        )
        try:
            completion = await backend.chat(call.messages, call.params, on_attempt=on_attempt)
        except BackendError as exc:
            raise StepFailed(f"{call.label} failed: {exc}") from None
        return Reply.sent(completion)
