"""Shared pieces of the fork tests: a stub whose replies depend only on the prompt (so a fork
that sends its parent's prompts gets its parent's replies), and a stored prison chat to fork."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from simulator.llm.access import LLMAccess
from simulator.services import experiments as exp_service
from simulator.services import forks
from simulator.services import runs as run_service
from simulator.worlds.chat.services import runs as conv_service

REPO = Path(__file__).resolve().parents[2]
PRISON = REPO / "prompts" / "experiments" / "prison.yaml"


def prompt_reply(body: dict) -> str:
    """The same prompt (and model) always gets the same reply."""
    text = body["model"] + "|" + "|".join(m["content"] for m in body["messages"])
    return f"{body['model']} says {hashlib.sha256(text.encode()).hexdigest()[:8]}"


def parent_chat(store, *, messages: int = 6, days: int = 1, model: str = "ollama:a") -> str:
    """A finished guard-and-prisoner chat, stored as `llm-sim run` stores it."""
    view = exp_service.import_yaml(store, PRISON, "alice")
    spec = conv_service.build_spec(
        view, agents="guard=1,prisoner=1", total_messages=messages, days=days, llm=model, seed=5
    )

    async def go():
        llms = LLMAccess()
        try:
            doc = run_service.create_run(store, view, spec, "alice")
            return await conv_service.run(store, doc["_id"], llms)
        finally:
            await llms.aclose()

    outcome = asyncio.run(go())
    assert outcome.status == "done", outcome.error
    return outcome.conversation_id


def fork_and_run(store, parent_id: str, at: str, **changes) -> list[str]:
    """Plan, store and run a fork as `llm-sim conversation fork` does; the new ids."""
    plan = forks.plan(store, parent_id, at, **changes)

    async def go():
        llms = LLMAccess()
        try:
            await forks.preflight(plan, llms)
            docs = forks.create(store, plan, "alice")
            outcomes = await forks.run_all(store, docs, llms)
        finally:
            await llms.aclose()
        assert all(o.status == "done" for o in outcomes), [o.error for o in outcomes]
        return [d["_id"] for d in docs]

    return asyncio.run(go())
