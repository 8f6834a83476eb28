"""The estimate made before a sweep runs is close to what the sweep then uses.

The shipped paper design (prompts/sweeps/prison_paper.yaml, one repetition per cell) runs on
the loopback OpenAI-protocol stub standing in for openai:gpt-4.1, priced from the shipped table.
The stub reports usage as whitespace words (simulator/testing/stub_common.count_words: its
"tokenizer"), so the estimate counts with the same rule (token_count.WORDS) rather than with
characters per token: the comparison tests the estimate's model of the run (which calls, which
prompts, how the transcript grows), not a tokenizer's ratio. Reply length comes from the ledger,
as for a researcher who ran one pilot conversation first.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from simulator.domain.pricing import price_for
from simulator.domain.yaml_io import load_model
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.llm.token_count import WORDS
from simulator.services import estimates
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.services.sweep_runs import SweepRunner
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "prompts" / "experiments" / "prison_paper.yaml"
PAPER_SWEEP = REPO / "prompts" / "sweeps" / "prison_paper.yaml"
CELL = {  # the pilot's cell
    "Guard/Personality": "bad",
    "Prisoner/Personality": "bad",
    "Prisoner/Goal": "escape",
    "shared/Risks": "on",
    "shared/Research oversight": "on",
}
MODEL = "openai:gpt-4.1"


@pytest.fixture
def gpt_stub(monkeypatch):
    with StubLLMServer(models=["gpt-4.1"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


def _run(store, spec: SweepSpec, view) -> str:
    sweep, _ = sweep_service.create(store, view, spec, "alice")

    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait())
        try:
            return await SweepRunner(store, sweep["_id"], llms, poll_s=0.05).run()
        finally:
            await llms.aclose()

    progress = asyncio.run(go())
    assert progress.failed == 0 and progress.done == len(
        store.sweeps.conversation_ids(sweep["_id"])
    )
    return sweep["_id"]


def _used(store, sweep_id: str) -> tuple[int, int, int]:
    ids = store.sweeps.conversation_ids(sweep_id)
    calls = [c for rows in store.calls.for_conversations(ids).values() for c in rows]
    done = [c for c in calls if c.get("state") == "done"]
    return len(done), sum(c["tokens_in"] for c in done), sum(c["tokens_out"] for c in done)


def test_the_paper_sweeps_estimate_is_within_15_percent_of_what_it_used(gpt_stub, store):
    view = exp_service.import_yaml(store, PAPER, "alice")
    design = load_model(PAPER_SWEEP, SweepSpec, "sweep")
    pilot = design.model_copy(
        update={
            "variants": {},
            "linked": [],
            "cells": [CELL],
            "llms": [MODEL],
            "repetitions": 1,
            "total_messages": 10,  # shorter than the sweep's: none of its conversations
        }
    )
    _run(store, pilot, view)  # one pilot conversation: the ledger now knows gpt-4.1's replies

    sweep = design.model_copy(update={"llms": [MODEL], "repetitions": 1, "name": "full"})
    plan = sweep_service.plan(store, view, sweep, "alice")
    assert plan.conversations == 40 and plan.already_stored == 0
    estimate = estimates.sweep_estimate(store, view, sweep, plan.planned, counter=WORDS)
    assert estimate is not None
    total = estimate["total"]
    assert estimate["method"] == WORDS.name and estimate["price_unknown"] == []
    assert MODEL in estimate["reply_tokens"]  # sized by the pilot's replies, not max_tokens

    sweep_id = _run(store, sweep, view)
    calls, tokens_in, tokens_out = _used(store, sweep_id)
    price = price_for(MODEL)
    assert price is not None and price.source.startswith("table ")
    cost = price.cost(tokens_in, tokens_out)

    assert total["calls"] == calls  # no retries on a stub that never fails
    for estimated, actual in (
        (total["tokens_in"], tokens_in),
        (total["tokens_out"], tokens_out),
        (total["cost"], cost),
    ):
        assert abs(estimated - actual) <= 0.15 * actual, (estimated, actual)
    assert sum(cell["calls"] for cell in estimate["cells"].values()) == calls
    assert total["seconds"] is not None  # the pilot's latencies time it
