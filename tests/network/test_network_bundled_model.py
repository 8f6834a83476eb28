"""Two friends for one round on the bundled SmolLM2 (llama.cpp): a real model's replies go
through the answer parser, a parsed answer is stored as the agent's, and every answer that never
parsed is kept from round 0 and counted, never silently. The shipped experiment's scenario is cut
to the product and the answer format (short prompts keep the calls to seconds on two CPUs), and
greedy sampling makes the tiny model fill in the JSON the format shows."""

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

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts/experiments/llm_sam_network.yaml"
SCENARIO_YAML = REPO / "simulator/prompts/network/costly_purchase.yaml"
ANSWER_FORMAT = (
    "Fill in this JSON and output only the JSON:\n"
    '{"Thought": "Good value.", "Opinion": 7, "Decision": "Yes"}'
)


pytestmark = pytest.mark.usefixtures("bundled_smollm2")


@pytest.mark.slow
def test_two_friends_one_round_on_the_bundled_model(tmp_path):
    from simulator.store.store import open_store_uri

    scenario = yaml.safe_load(SCENARIO_YAML.read_text())
    scenario["background"] = scenario["background"].split("\n\n")[1]  # the product only
    scenario["characteristics"] = "Your name is {name}."
    scenario["private_information"] = []
    scenario["answer_format"] = ANSWER_FORMAT
    (tmp_path / "scenario.yaml").write_text(yaml.safe_dump(scenario))
    data = yaml.safe_load(NETWORK_YAML.read_text())
    data["llms"] = [{"model": "local:smollm2", "params": {"temperature": 0.0, "max_tokens": 48}}]
    data["network"]["graph"] = {"type": "complete", "n": 2}
    data["network"]["scenario"] = str(tmp_path / "scenario.yaml")
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
        assert len(first) == 2 and 2 <= outcome.counters["calls"] <= 6
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
        assert any(not row["answer_fallback"] for row in first)  # the parsed-answer path ran
        fallbacks = sum(r["answer_fallback"] for r in first)
        assert outcome.counters["answer_fallbacks"] == fallbacks
    finally:
        store.close()
