"""Network sweeps: the plan (graphs x scenarios x seeds with a theory twin per cell), refusals
that write nothing, an idempotent create, and a run of every cell through the shared runner."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.services import experiments as exp_service
from simulator.services.sweep_runs import SweepRunner
from simulator.testing import StubLLMServer
from simulator.worlds.network.domain.sweep import NetworkSweepSpec
from simulator.worlds.network.services import sweeps as network_sweeps

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
SHIPPED_SWEEP = REPO / "prompts" / "sweeps" / "llm_sam_networks.yaml"
SMALL = {"type": "barabasi_albert", "n": 8, "m": 2, "seed": 1}
DYNAMIC = {
    "type": "dynamic",
    "snapshots": 3,
    "base": {"type": "erdos_renyi", "n": 8, "p": 0.4, "seed": 2},
    "rewire": 3,
    "seed": 5,
}


def six(body: dict) -> str:
    return '{"Thought": "ok", "Opinion": 6, "Decision": "Yes"}'


def _spec(**fields) -> NetworkSweepSpec:
    data = {"llms": ["openai:stub"], "graphs": [SMALL, DYNAMIC], "rounds": [2], "seeds": [1, 2]}
    return network_sweeps.validate_spec({**data, **fields})


def test_the_plan_pairs_every_llm_cell_with_a_theory_twin(store):
    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    spec = _spec(scenarios=["costly_purchase", "pricier_plan"])
    plan = network_sweeps.plan(store, view, spec, "alice")
    assert (plan.cells, plan.conversations) == (8, 16)  # (stub + theory) x 2 graphs x 2 scenarios
    assert plan.expected_calls == 8 * 8 * 2  # LLM runs only: 8 agents x 2 rounds each
    labels = {p.cell.label() for p in plan.planned}
    assert (
        "llm=theory graph=barabasi_albert(n=8,m=2,seed=1) scenario=pricier_plan "
        "agents=synthetic rounds=2"
    ) in labels
    assert len(labels) == 8 and sum(label.startswith("llm=theory") for label in labels) == 4
    assert "theory twins: yes" in plan.breakdown
    off = network_sweeps.plan(store, view, _spec(theory=False), "alice")
    assert off.conversations == 4 and "theory twins: no" in off.breakdown


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"llms": ["openai:stub", "theory"]}, "theory twins come from `theory: true`"),
        ({"graphs": [SMALL, dict(SMALL)]}, "graphs lists a network twice"),
        ({"graphs": [SMALL, {"type": "barabasi_albert", "n": 8}]}, "sweep.graphs[1]"),
        ({"seed": 3}, "seeds lists the seed of every run"),
    ],
)
def test_a_bad_sweep_is_refused_by_name(fields, words):
    with pytest.raises(UserError) as caught:
        _spec(**fields)
    assert words in str(caught.value)


def test_a_cell_that_cannot_run_is_named_and_nothing_is_stored(store):
    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    big = {"type": "complete", "n": 400}  # the shipped table has fewer rows
    with pytest.raises(UserError, match=r"the cell llm=openai:stub graph=complete\(n=400"):
        network_sweeps.create(store, view, _spec(graphs=[SMALL, big]), "alice")
    assert store.sweeps.list(view.id) == []
    assert store.conversations.ids(view.id) == []


def test_every_run_of_a_sweep_runs_and_a_second_create_adds_nothing(store, monkeypatch):
    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    spec = _spec()
    sweep, added = network_sweeps.create(store, view, spec, "alice")
    assert added == 8
    again, added_again = network_sweeps.create(store, view, spec, "alice")
    assert (again["_id"], added_again) == (sweep["_id"], 0)
    with StubLLMServer(models=["stub"], latency_s=0.005) as stub:
        stub.reply_fn = six

        monkeypatch.setenv("OPENAI_BASE_URL", stub.openai_base_url)

        async def go():
            llms = LLMAccess()
            try:
                return await SweepRunner(store, sweep["_id"], llms, concurrency=3).run()
            finally:
                await llms.aclose()

        asyncio.run(go())
        assert len(stub.chat_requests) == 4 * 8 * 2  # the LLM runs' calls, none for the theory
    runs = store.sweeps.conversations(sweep["_id"])
    assert {r["status"] for r in runs} == {"done"}
    theory = [r for r in runs if r["spec"]["model"] == "theory"]
    llm = [r for r in runs if r["spec"]["model"] == "llm"]
    assert len(theory) == len(llm) == 4
    pairs = {(json.dumps(r["spec"]["settings"]["graph"]), r["spec"]["seed"]) for r in llm}
    assert pairs == {
        (json.dumps(r["spec"]["settings"]["graph"]), r["spec"]["seed"]) for r in theory
    }
    for run in runs:
        assert len(store.network_rounds.for_run(run["_id"])) == 8 * 3
        assert run["counters"]["calls"] == (0 if run in theory else 16)


def test_the_shipped_sweep_file_plans_its_networks(store, tmp_path):
    from simulator.worlds.network.cli.sweep_options import network_sweep_spec

    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    spec = network_sweep_spec(str(SHIPPED_SWEEP), {"llms": ("openai:stub",)})
    plan = network_sweeps.plan(store, view, spec, "alice")
    assert plan.cells == 2 * 4 * 2 and plan.conversations == 16 * 3
    assert {p.cell.graph["type"] for p in plan.planned} == {
        "barabasi_albert",
        "watts_strogatz",
        "erdos_renyi",
        "dynamic",
    }
