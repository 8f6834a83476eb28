"""Three friends for one round on the bundled SmolLM2 (llama.cpp): a real model's replies go
through the answer parser, and every answer that never parsed is kept from round 0 and
counted, never silently."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from simulator.llm.access import LLMAccess
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.worlds.network.domain.answers import parse_answer
from simulator.worlds.network.services import runs as network_runs

NETWORK_YAML = Path(__file__).resolve().parents[2] / "prompts/experiments/llm_sam_network.yaml"


pytestmark = pytest.mark.usefixtures("bundled_smollm2")


@pytest.mark.slow
def test_three_friends_one_round_on_the_bundled_model(tmp_path):
    from simulator.store.store import open_store_uri

    data = yaml.safe_load(NETWORK_YAML.read_text())
    # few tokens keep the calls short: most replies will not be a whole JSON answer
    data["llms"] = [{"model": "local:smollm2", "params": {"temperature": 1.0, "max_tokens": 16}}]
    data["network"]["graph"] = {"type": "complete", "n": 3}
    path = tmp_path / "net.yaml"
    path.write_text(yaml.safe_dump(data))
    store = open_store_uri(str(tmp_path / "store"))
    try:
        view = exp_service.import_yaml(store, path, "alice")
        spec = network_runs.build_spec(view, seed=5, settings={"rounds": 1})

        async def go():
            llms = LLMAccess()
            try:
                await run_service.preflight("network", spec, llms)
                run = run_service.create_run(store, view, spec, "alice")
                return await network_runs.run(store, run["_id"], llms)
            finally:
                await llms.aclose()

        outcome = asyncio.run(go())
        assert outcome.status == "done", outcome.error
        rows = store.network_rounds.for_run(outcome.conversation_id)
        zero = {r["agent"]: r for r in rows if r["round"] == 0}
        first = [r for r in rows if r["round"] == 1]
        assert len(first) == 3 and 3 <= outcome.counters["calls"] <= 9
        for row in first:
            parsed = [parse_answer(text) for text in row["replies"]]
            assert row["attempts"] == len(row["replies"]) and row["replies"]
            if row["answer_fallback"]:  # three replies, none parsed: round 0's answer kept
                assert row["attempts"] == 3 and parsed == [None] * 3
                previous = zero[row["agent"]]
                assert (row["opinion"], row["decision"]) == (
                    previous["opinion"],
                    previous["decision"],
                )
            else:  # the last reply parsed, and it is the stored answer
                assert parsed[-1] is not None and parsed[-1].opinion == row["opinion"]
        fallbacks = sum(r["answer_fallback"] for r in first)
        assert outcome.counters["answer_fallbacks"] == fallbacks
    finally:
        store.close()
