"""The theory as a stored run: the same rows as an LLM run, computed from the stored seed with
the documented mapping, replayable, and resumed after an interruption without a changed round."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import numpy as np
import pytest

from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.worlds.network.domain.agents_table import read_agents
from simulator.worlds.network.domain.answers import round_zero
from simulator.worlds.network.domain.theory import coevolve, from_agents
from simulator.worlds.network.engine.run import graphs_of
from simulator.worlds.network.services import runs as network_runs

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
SYNTHETIC = REPO / "prompts" / "network" / "agents_synthetic.csv"


def _run(store, run_id, stop_after_round: int | None = None):
    async def go():
        llms = LLMAccess()
        stop = asyncio.Event()

        def on_event(event):
            if stop_after_round is not None and getattr(event, "round", None) == stop_after_round:
                stop.set()

        try:
            return await network_runs.run(store, run_id, llms, on_event=on_event, stop=stop)
        finally:
            await llms.aclose()

    return asyncio.run(go())


def _theory(store, seed=7, **settings):
    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    spec = network_runs.build_spec(view, seed=seed, settings=settings, theory=True)
    return spec, run_service.create_run(store, view, spec, "alice")


def _table(rows):
    return [(r["round"], r["agent"], r["opinion"], r["decision"], r["exact_opinion"]) for r in rows]


def test_a_theory_run_stores_the_coevolution_from_its_seed(store):
    theory = {"alpha": -0.2, "mu": 0.3, "rationality": 8.0, "information": [0.5, -0.5]}
    spec, run = _theory(store, rounds=4, theory=theory)
    assert spec.llm is None and spec.calls == 0 and run["agents"][0]["model"] == "theory"
    outcome = _run(store, run["_id"])
    assert outcome.status == "done", outcome.error
    assert outcome.counters["calls"] == 0 and outcome.counters["messages"] == 50 * 5
    rows = store.network_rounds.for_run(run["_id"])

    table = read_agents(SYNTHETIC)[:50]
    zero = [r for r in rows if r["round"] == 0]
    assert [(r["opinion"], r["decision"], r["thought"]) for r in zero] == [
        (a.opinion, "Yes" if a.decision else "No", a.thought) for a in map(round_zero, table)
    ]
    # the mapping of the module's docstring, computed here by hand from the table
    start = from_agents(table)
    expected = coevolve(
        graphs_of(spec),
        start.opinions,
        start.actions,
        lam=0.5,  # ZYC's opinion weight (network.theory.opinion_weight's default)
        cost=[r.lam for r in table],  # the table's lambda: the cost the opinion is weighed against
        a=[r.a for r in table],
        tau=[r.tau for r in table],
        f=[r.f for r in table],
        alpha=-0.2,
        mu=0.3,
        beta=8.0,
        information=[0.5, -0.5, None, None],
        rounds=4,
        seed=7,
    )
    for t in range(5):
        got = [r for r in rows if r["round"] == t]
        assert [r["opinion"] for r in got] == expected.scores[t].tolist()
        assert [r["decision"] == "Yes" for r in got] == expected.decisions[t].tolist()
        exact = [r["exact_opinion"] for r in got]
        assert np.allclose(exact, 5 * (expected.opinions[t] + 1), atol=1e-6)
    assert math.isclose(zero[0]["exact_opinion"], 10 * table[0].opinion, abs_tol=1e-6)
    assert rows[55]["friends"] == [spec.names[j] for j in sorted(graphs_of(spec)[0].adj[5])]


def test_the_same_seed_replays_and_an_interrupted_run_resumes_to_the_same_rounds(store):
    _, whole = _theory(store, seed=11, rounds=3)
    assert _run(store, whole["_id"]).status == "done"
    _, cut = _theory(store, seed=11, rounds=3)
    first = _run(store, cut["_id"], stop_after_round=1)
    assert first.status == "interrupted"
    assert {r["round"] for r in store.network_rounds.for_run(cut["_id"])} == {0, 1}
    resumed = _run(store, cut["_id"])
    assert resumed.status == "done" and resumed.counters["messages"] == 200
    assert _table(store.network_rounds.for_run(cut["_id"])) == _table(
        store.network_rounds.for_run(whole["_id"])
    )


def test_without_a_seed_the_theory_draws_one_and_says_so(store):
    spec, _ = _theory(store, seed=None)
    assert spec.seed is not None
    assert f"seed: none given; the theory drew {spec.seed} (stored: the run replays)" in (
        spec.defaults_applied
    )
    assert "theory: alpha 0" in spec.defaults_applied


def test_a_theory_run_names_no_model(store):
    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    with pytest.raises(UserError, match="a theory run has no model"):
        network_runs.build_spec(view, llm="openai:stub", seed=1, theory=True)
