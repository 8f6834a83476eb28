"""Shared pieces of the replay tests: a stub whose replies depend only on the prompt (so a
replay gets the same ones), with a switch that changes one chosen reply, and small runs of
each world stored through the services the CLI uses."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from simulator.llm.access import LLMAccess
from simulator.services import experiments as exp_service
from simulator.services import replays
from simulator.services import runs as run_service
from simulator.services.replays import ReplayResult
from simulator.worlds.chat.services import runs as conv_service
from simulator.worlds.grid.services import runs as grid_runs

REPO = Path(__file__).resolve().parents[2]
PRISON = REPO / "prompts" / "experiments" / "prison.yaml"
GRID = REPO / "prompts" / "experiments" / "takata_grid.yaml"


class PromptReplies:
    """A reply function for the stub: the same prompt gets the same reply; `change_at = n`
    makes the n-th request from then on answer differently (one reply changed)."""

    def __init__(self) -> None:
        self.count = 0
        self.change_at: int | None = None

    def __call__(self, body: dict) -> str:
        self.count += 1
        if self.change_at is not None and self.count == self.change_at:
            return "CHANGED: I will not say what I said before."
        prompt = body["messages"][-1]["content"]
        if "Choose your next move" in prompt:  # the grid's move prompt
            return "I pick x+1 now"
        if '"Opinion"' in prompt or "Opinion" in prompt:  # the network's answer prompt
            return 'Fine. {"Thought": "good value", "Opinion": 6, "Decision": "Yes"}'
        digest = hashlib.sha256(prompt.encode()).hexdigest()[:8]
        return f"I hear you ({digest}). #together"

    def restart(self, change_at: int | None = None) -> None:
        self.count, self.change_at = 0, change_at


def run_chat(store, model: str = "ollama:stub", seed: int | None = 5, path: Path = PRISON):
    view = exp_service.import_yaml(store, path, "alice")
    spec = conv_service.build_spec(
        view, agents="guard=1,prisoner=1", total_messages=3, llm=model, seed=seed
    )
    return _run(store, conv_service, view, spec)


def run_grid(store, model: str = "openai:stub"):
    view = exp_service.import_yaml(store, GRID, "alice")
    spec = grid_runs.build_spec(view, llm=model, seed=4, world={"agents": 3, "steps": 2})
    return _run(store, grid_runs, view, spec)


def _run(store, service, view, spec) -> str:
    async def go():
        llms = LLMAccess()
        try:
            await run_service.preflight(view.kind, spec, llms)
            doc = run_service.create_run(store, view, spec, "alice")
            return await service.run(store, doc["_id"], llms)
        finally:
            await llms.aclose()

    outcome = asyncio.run(go())
    assert outcome.status == "done", outcome.error
    return outcome.conversation_id


def replay(store, run_id: str, llm: str | None = None, force: bool = False) -> ReplayResult:
    plan = replays.plan(store, run_id, llm)

    async def go():
        llms = LLMAccess()
        try:
            return await replays.replay(store, plan, llms, "alice", force=force)
        finally:
            await llms.aclose()

    return asyncio.run(go())


def ledger(store, run_id: str) -> list[tuple]:
    """What a run's calls asked and got, in order."""
    rows = store.calls.for_conversation(run_id)
    return [(r["purpose"], r["prompt_hash"], r["response"]) for r in rows if r["state"] == "done"]
