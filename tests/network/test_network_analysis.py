"""Measures and exports of stored network runs: twins paired by seed, by settings or not at all,
figures equal to `round_measures` on the stored rows, the distance taken against the right
twin, and the three export tables with their rows and columns, on every store flavour."""

from __future__ import annotations

import asyncio
import csv
import json
import random
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.network.analysis import (
    OTHER_SEED,
    SAME_SEED,
    Twin,
    export_network,
    find_twins,
    network_measures,
    round_measures,
    trajectory_distance,
)
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.domain.graphs import graph_for_round
from simulator.worlds.network.engine.run import graphs_of
from simulator.worlds.network.services import runs as network_runs

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
SMALL = {"graph": {"type": "barabasi_albert", "n": 10, "m": 2, "seed": 1}, "rounds": 2}


def some_answer(body: dict) -> str:
    """A reply that depends on the prompt (so agents and rounds differ), never on chance."""
    opinion = random.Random(body["messages"][-1]["content"]).randint(0, 10)
    decision = "Yes" if opinion >= 5 else "No"
    return f'Well. {{"Thought": "t", "Opinion": {opinion}, "Decision": "{decision}"}}'


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = some_answer
        yield server


def _run(store, run_id: str) -> None:
    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        try:
            return await network_runs.run(store, run_id, llms)
        finally:
            await llms.aclose()

    outcome = asyncio.run(go())
    assert outcome.status == "done", outcome.error


def stored_runs(store) -> dict[str, str]:
    """Two LLM runs (seeds 3 and 9), one with other rounds, and two theory runs (seed 4 first,
    then seed 3 with other theory parameters, which a twin may have)."""
    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    plan = {
        "theory4": {"seed": 4, "theory": True, "settings": SMALL},
        "llm3": {"seed": 3, "llm": "openai:stub", "settings": SMALL},
        "llm9": {"seed": 9, "llm": "openai:stub", "settings": SMALL},
        "llm3_rounds1": {"seed": 3, "llm": "openai:stub", "settings": {**SMALL, "rounds": 1}},
        "theory3": {"seed": 3, "theory": True, "settings": {**SMALL, "theory": {"mu": 0.4}}},
    }
    ids = {"experiment": view.id}
    for name, kw in plan.items():
        spec = network_runs.build_spec(view, **kw)
        ids[name] = run_service.create_run(store, view, spec, "alice")["_id"]
        _run(store, ids[name])
    return ids


def table(rows: list[dict]) -> tuple[list[list[int]], list[list[bool]]]:
    """Opinions and decisions [round][agent] read straight from the stored rows."""
    rounds = sorted({r["round"] for r in rows})
    by = {(r["round"], r["agent_index"]): r for r in rows}
    agents = sorted({r["agent_index"] for r in rows})
    opinions = [[by[t, i]["opinion"] for i in agents] for t in rounds]
    decisions = [[by[t, i]["decision"] == "Yes" for i in agents] for t in rounds]
    return opinions, decisions


def read_csv(path: str) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def doc(run_id: str, seed: int | None, is_theory: bool, minute: int, **settings) -> dict:
    spec = {
        "model": "theory" if is_theory else "llm",
        "seed": seed,
        "settings": {"graph": {"type": "complete", "n": 3}, "rounds": 2, **settings},
        "snapshots": [[[0, 1], [1, 2]]],
    }
    created = datetime(2025, 1, 1, 12, minute)
    return {"_id": run_id, "experiment_id": "exp_1", "created_at": created, "spec": spec}


def test_twins_prefer_the_same_seed_then_the_oldest_with_equal_settings():
    theories = [
        doc("t_new_seed5", 5, True, 30, theory={"alpha": -0.5}),  # theory params do not count
        doc("t_old_seed7", 7, True, 10),
        doc("t_other_rounds", 1, True, 5, rounds=3),
        {**doc("t_other_exp", 1, True, 1), "experiment_id": "exp_2"},
    ]
    moved = doc("t_other_edges", 1, True, 1)
    moved["spec"]["snapshots"] = [[[0, 2]]]
    runs = [
        doc("l_seed5", 5, False, 40, free_chat=[1]),  # only a model chats
        doc("l_seed1", 1, False, 40),
        doc("l_noseed", None, False, 40),
        doc("l_rounds4", 5, False, 40, rounds=4),
        theories[0],  # a theory run among the runs is not given a twin
    ]
    assert find_twins(runs, [*theories, moved, runs[0]]) == {
        "l_seed5": Twin("t_new_seed5", SAME_SEED),
        "l_seed1": Twin("t_old_seed7", OTHER_SEED),  # seed 1 only where the settings differ
        "l_noseed": Twin("t_old_seed7", OTHER_SEED),
        "l_rounds4": None,
    }


def test_measures_pair_each_run_with_its_twin_and_equal_round_measures(store, stub):
    ids = stored_runs(store)
    order = [ids[k] for k in ("llm3", "llm9", "llm3_rounds1", "theory3", "theory4")]
    measured = network_measures(store, order, ids["experiment"])
    runs = {row["conversation_id"]: row for row in measured["runs"]}
    assert [r["conversation_id"] for r in measured["runs"]] == order

    assert runs[ids["llm3"]]["twin"] == {"id": ids["theory3"], "match": SAME_SEED}
    assert runs[ids["llm9"]]["twin"] == {"id": ids["theory4"], "match": OTHER_SEED}
    lonely = runs[ids["llm3_rounds1"]]
    assert lonely["twin"] is None and lonely["twin_mean_opinion_rmse"] is None
    assert f"llm-sim run {ids['experiment']} --theory --seed 3 --rounds 1" in lonely["twin_note"]
    for name in ("theory3", "theory4"):
        assert runs[ids[name]]["theory"] and runs[ids[name]]["model"] == "theory"
        assert runs[ids[name]]["twin"] is None

    for name in ("llm3", "llm9", "theory3"):  # every round as round_measures reads the rows
        row = runs[ids[name]]
        opinions, decisions = table(store.network_rounds.for_run(ids[name]))
        graphs = graphs_of(NetworkSpec.model_validate(store.conversations.get(ids[name])["spec"]))
        expected = [
            {"round": t, **round_measures(o, d, graph_for_round(graphs, t), decisions[0])}
            for t, (o, d) in enumerate(zip(opinions, decisions, strict=True))
        ]
        assert row["rounds"] == expected and len(expected) == 3
        assert row["mean_opinion"] == expected[-1]["mean_opinion"]

    for name, twin in (("llm3", "theory3"), ("llm9", "theory4")):  # against the right twin
        mine = table(store.network_rounds.for_run(ids[name]))
        theirs = table(store.network_rounds.for_run(ids[twin]))
        distance = trajectory_distance(*mine, *theirs)
        row = runs[ids[name]]
        assert row["twin_opinion_rmse"] == distance["opinion_rmse"] > 0
        assert row["twin_decision_disagreement"] == distance["decision_disagreement"]
        assert row["distance_rounds"] == 3

    cells = {c["label"]: c for c in measured["cells"]}
    assert sorted(c["n"] for c in cells.values()) == [1, 2, 2]  # llm x rounds 2, theory, rounds 1
    both = next(c for c in measured["cells"] if c["n"] == 2 and not c["theory"])
    values = [runs[ids[k]]["share_yes"] for k in ("llm3", "llm9")]
    assert both["share_yes_mean"] == pytest.approx(np.mean(values))
    assert "twin" in measured["distance"] and "RMSE" in measured["distance"]


def test_export_writes_the_three_network_tables(store, stub, tmp_path):
    ids = stored_runs(store)
    order = [ids[k] for k in ("llm3", "llm9", "llm3_rounds1", "theory3", "theory4")]
    files = export_network(store, order, ids["experiment"], "csv", tmp_path / "out")
    rows = {f["table"]: f["rows"] for f in files}
    assert rows == {
        "network_runs": 5,
        "network_rounds": 10 * 3 * 4 + 10 * 2,
        "network_round_measures": 3 * 4 + 2,
    }
    read = {f["table"]: read_csv(f["path"]) for f in files}
    runs = {r["conversation_id"]: r for r in read["network_runs"]}
    assert runs[ids["llm3"]]["twin_id"] == ids["theory3"]
    assert runs[ids["llm3"]]["twin_match"] == SAME_SEED
    assert runs[ids["llm9"]]["twin_id"] == ids["theory4"]
    assert runs[ids["llm3_rounds1"]]["twin_id"] == ""
    assert runs[ids["theory3"]]["model"] == "theory" and runs[ids["llm3"]]["model"] == "openai:stub"
    first = runs[ids["llm3"]]
    assert (first["graph_type"], first["agents"], first["rounds"], first["seed"]) == (
        "barabasi_albert",
        "10",
        "2",
        "3",
    )
    assert first["scenario"] == "costly_purchase" and first["answer_fallbacks"] == "0"

    stored = store.network_rounds.for_run(ids["llm3"])
    exported = [r for r in read["network_rounds"] if r["conversation_id"] == ids["llm3"]]
    assert [(int(r["round"]), r["agent"], int(r["opinion"]), r["decision"]) for r in exported] == [
        (s["round"], s["agent"], s["opinion"], s["decision"]) for s in stored
    ]
    later = next(r for r in exported if r["round"] == "1")
    assert json.loads(later["replies"])[0].startswith("Well.") and later["exact_opinion"] == ""
    theory_rows = [r for r in read["network_rounds"] if r["conversation_id"] == ids["theory3"]]
    assert all(r["exact_opinion"] != "" for r in theory_rows)

    measures = [r for r in read["network_round_measures"] if r["conversation_id"] == ids["llm9"]]
    assert [r["round"] for r in measures] == ["0", "1", "2"]
    assert {"mean_opinion", "share_yes", "bimodality", "assortativity"} <= set(measures[0])
