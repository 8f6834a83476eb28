"""Three agents for two steps on the bundled SmolLM2 (llama.cpp): a real model's replies go
through delivery, memory and the move parser, a parsed move moves the agent, and every invalid
move is counted. The move prompt is cut to the memory and the commands, and sampling is greedy,
so that the tiny model names a command."""

from __future__ import annotations

import asyncio

import pytest
import yaml
from grid_helpers import GRID_YAML

from simulator.llm.access import LLMAccess
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.worlds.grid.services import runs as grid_runs

pytestmark = pytest.mark.usefixtures("bundled_smollm2")


@pytest.mark.slow
def test_three_agents_two_steps_on_the_bundled_model(tmp_path):
    from simulator.store.store import open_store_uri

    data = yaml.safe_load(GRID_YAML.read_text())
    # short replies and few agents keep the 18 calls to seconds, not minutes, on two CPUs
    data["llms"] = [{"model": "local:smollm2", "params": {"temperature": 0.0, "max_tokens": 8}}]
    data["prompts"]["move"] = (
        "Memory: {memory}\nYou may stay or move. "
        "Answer with exactly one of these commands: x+1, x-1, y+1, y-1, stay."
    )
    store = open_store_uri(str(tmp_path / "store"))
    try:
        view = exp_service.create(store, exp_service.validate_data(data), "alice")
        spec = grid_runs.build_spec(view, seed=11, world={"agents": 3, "steps": 2})

        async def go():
            llms = LLMAccess()
            try:
                await run_service.preflight("grid", spec, llms)
                run = run_service.create_run(store, view, spec, "alice")
                return await grid_runs.run(store, run["_id"], llms)
            finally:
                await llms.aclose()

        outcome = asyncio.run(go())
        assert outcome.status == "done", outcome.error
        rows = store.grid_steps.for_run(outcome.conversation_id)
        assert len(rows) == 6 and outcome.counters["calls"] == 18
        assert all(r["message"] and r["memory"] for r in rows)
        assert any(not r["move_fallback"] for r in rows)  # a reply named a command
        fallbacks = sum(r["move_fallback"] for r in rows)
        assert outcome.counters["move_fallbacks"] == fallbacks
        for row in rows:  # a parsed move moved the agent exactly so; a fallback stayed
            (x0, y0), (x1, y1) = row["position_before"], row["position_after"]
            dx, dy = {"x+1": (1, 0), "x-1": (-1, 0), "y+1": (0, 1), "y-1": (0, -1)}.get(
                row["move"], (0, 0)
            )
            assert (x1, y1) == ((x0 + dx) % 50, (y0 + dy) % 50)
    finally:
        store.close()
