"""One stage of a world step: every actor's call at once, each in the ledger as it happens.

Worlds where many agents act in the same step (the 2D community, the opinion network) send a
stage's calls together: the endpoint pools of LLMAccess bound how many are in flight, and the
HF backend batches what arrives together. A resumed run never repeats a call whose result is
stored: the ledger's finished rows are replayed when the same actor asks the same prompt again
at the same step and stage (the prompt is a pure function of the stored state, so it does).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from simulator.domain.experiment import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.engine.recorder import StoreRecorder
from simulator.llm.access import LLMAccess
from simulator.llm.base import BackendError

REPLAYED = "replayed_calls"  # counter: calls answered from the ledger on resume, not resent


class StageFailed(Exception):
    """A call failed after every retry; the run is marked failed with this message."""


@dataclass(frozen=True)
class ActorCall:
    """One actor's call in one stage: where it sits (step, actor index) and what it sends."""

    purpose: str
    step: int
    index: int
    agent: str
    messages: list[dict]
    params: GenerationParams


@dataclass(frozen=True)
class Reply:
    text: str
    replayed: bool  # taken from the ledger of an earlier, killed run


ReplayKey = tuple[str, int, str, str]  # purpose, step, agent, prompt hash


def replay_book(calls: Sequence[dict]) -> dict[ReplayKey, str]:
    """Finished calls of a run by (purpose, step, agent, prompt hash): the latest answer wins."""
    book: dict[ReplayKey, str] = {}
    for call in calls:
        if call.get("state") == "done" and call.get("response") is not None:
            key = (call["purpose"], call["day"], call.get("agent") or "", call["prompt_hash"])
            book[key] = call["response"]
    return book


class StageCalls:
    """Sends one stage's calls concurrently through one model, recording or replaying each."""

    def __init__(
        self,
        recorder: StoreRecorder,
        llms: LLMAccess,
        choice: LLMChoice,
        replay: dict[ReplayKey, str] | None = None,
    ):
        self._recorder = recorder
        self._backend = llms.get(choice)
        self._choice = choice
        self._replay = replay or {}
        recorder.counters.setdefault(REPLAYED, 0)

    async def run(self, calls: Sequence[ActorCall]) -> list[Reply]:
        """Every call of the stage, in the order given; the first failure fails the stage (the
        others still finish and stay in the ledger, so a rerun replays them)."""
        results = await asyncio.gather(*(self._one(c) for c in calls), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return list(results)  # type: ignore[arg-type]

    async def _one(self, call: ActorCall) -> Reply:
        recorder = self._recorder
        digest, _ = recorder.store.calls.prompt_document(call.messages)
        stored = self._replay.pop((call.purpose, call.step, call.agent, digest), None)
        if stored is not None:
            recorder.counters[REPLAYED] += 1
            return Reply(stored, True)
        on_attempt = recorder.call_recorder(
            call.purpose,
            call.step,
            call.index,
            call.agent,
            self._choice,
            call.messages,
            call.params,
            self._backend.base_url,
        )
        try:
            completion = await self._backend.chat(call.messages, call.params, on_attempt=on_attempt)
        except BackendError as exc:
            raise StageFailed(
                f"{call.agent}'s {call.purpose} call of step {call.step} failed: {exc}"
            ) from None
        return Reply(completion.text, False)
