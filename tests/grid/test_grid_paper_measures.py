"""The grid's measures as Takata et al. (2024) read them, through the real CLI and store:
fallback move replies are never stays, hallucinated objects are counted per step, agent and
cluster with the experiment's own word list, and diversity is each agent's mean squared
displacement in embedding space."""

from __future__ import annotations

import csv
import uuid

import numpy as np
import pytest
import yaml
from grid_helpers import GRID_YAML

from simulator.store.repositories.experiments import experiment_version, spec_of
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.worlds.grid.analysis import measures as measures_mod
from simulator.worlds.grid.analysis.hallucinations import hallucination_measures, named_in
from simulator.worlds.grid.analysis.runs import GridRun
from simulator.worlds.grid.domain.experiment import GridExperiment
from simulator.worlds.grid.domain.measures import DEFAULT_HALLUCINATION_WORDS

AGENTS, STEPS = 3, 4


def fake_embed(texts):
    """Two features a test can add up by hand: words and '#' signs."""
    return np.array([[len(t.split()), t.count("#")] for t in texts], dtype=float)


def no_command(body: dict) -> str:
    """Move replies naming none of the five commands; agent0 talks of a tree, the others not."""
    prompt = body["messages"][-1]["content"]
    name = prompt.split("You are ", 1)[1].split(",", 1)[0]
    if "Choose your next move" in prompt:
        return "I think I will wander north for a while"
    if "Summarise" in prompt:
        return f"memory of {name}"
    return "Meet me by the tall Trees!" if name == "agent0" else f"hello from {name}"


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setattr(measures_mod, "packaged_embedder", lambda: fake_embed)
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = no_command
        yield {
            "SIM_DB": str(tmp_path / "store"),
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": server.openai_base_url,
        }


def _run(run_cli, env, yaml_path=GRID_YAML) -> str:
    made = run_cli(["experiment", "import", str(yaml_path), "--json"], env=env)
    assert made.code == 0, made.err
    args = ["run", made.json()["id"], "--llm", "openai:stub", "--agents", str(AGENTS)]
    done = run_cli([*args, "--steps", str(STEPS), "--seed", "3"], env=env)
    assert done.code == 0, done.err
    return done.out.split(":", 1)[0].strip()


def test_replies_naming_no_move_are_fallbacks_not_stays(run_cli, env, tmp_path):
    run_id = _run(run_cli, env)
    done = run_cli(["measures", run_id, "--json"], env=env)
    assert done.code == 0, done.err
    (run,) = done.json()["runs"]
    fallbacks = AGENTS * STEPS
    assert run["fallbacks"] == fallbacks and run["share_fallback"] == 1.0
    assert run["share_stay"] == 0 and run["stay_at_step_1"] == 0
    assert run["series"]["stay"] == [0] * STEPS
    assert run["moves"]["stay"] == 0 and run["moves"]["fallback"] == fallbacks
    assert all(m["stay"] == 0 and m["fallback"] == STEPS for m in run["moves_per_agent"].values())
    (cell,) = done.json()["cells"]
    assert cell["share_stay_mean"] == 0 and cell["moves"]["fallback"] == fallbacks
    # agent0's "Trees" (any case, plural) at every step; nobody else names a listed word
    assert run["hallucinated_messages"] == STEPS
    assert run["hallucination_share"] == pytest.approx(1 / AGENTS)
    assert run["series"]["hallucinations"] == [1] * STEPS
    assert run["hallucinations_per_agent"] == {"agent0": STEPS, "agent1": 0, "agent2": 0}
    assert [w["word"] for w in run["hallucinations"]] == ["tree"]
    assert run["hallucination_words"] == list(DEFAULT_HALLUCINATION_WORDS)
    # nobody moves and no message changes: each agent's texts stay where they started
    assert run["series"]["message_msd"] == [0.0] * STEPS

    out = tmp_path / "export"
    done = run_cli(["export", run_id, "--format", "csv", "-o", str(out)], env=env)
    assert done.code == 0, done.err
    with (out / "grid_steps.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == fallbacks
    assert {r["move_fallback"] for r in rows} == {"True"}
    assert {r["move_choice"] for r in rows} == {"fallback"}
    assert sum(r["hallucinations"] == "tree" for r in rows) == STEPS
    with (out / "grid_runs.csv").open() as handle:
        (summary,) = list(csv.DictReader(handle))
    assert (summary["stays"], summary["fallbacks"]) == ("0", str(fallbacks))
    assert summary["hallucinated_messages"] == str(STEPS)


def test_the_experiment_word_list_is_stored_and_used(run_cli, env, tmp_path):
    data = yaml.safe_load(GRID_YAML.read_text())
    data["measures"] = {"hallucination_words": ["Hello", "treasure chest"]}
    path = tmp_path / "words.yaml"
    path.write_text(yaml.safe_dump(data))
    run_id = _run(run_cli, env, path)
    store = open_store_uri(env["SIM_DB"])
    try:
        stored = store.conversations.get(run_id)["spec"]["measures"]
    finally:
        store.close()
    assert stored == {"hallucination_words": ["hello", "treasure chest"]}
    (run,) = run_cli(["measures", run_id, "--json"], env=env).json()["runs"]
    assert run["hallucination_words"] == ["hello", "treasure chest"]
    assert run["hallucinated_messages"] == (AGENTS - 1) * STEPS  # "hello from agentN"


def test_a_bad_word_is_refused_naming_the_field(run_cli, env, tmp_path):
    data = yaml.safe_load(GRID_YAML.read_text())
    data["measures"] = {"hallucination_words": ["tree", "tr33"]}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    done = run_cli(["experiment", "import", str(path)], env=env)
    assert done.code == 2
    assert "hallucination_words" in done.err and "tr33" in done.err


def test_an_experiment_without_measures_keeps_its_version():
    data = yaml.safe_load(GRID_YAML.read_text())
    plain = GridExperiment.model_validate(data)
    assert "measures" not in spec_of(plain)
    assert "measures" not in plain.model_dump(mode="json", exclude_none=True)
    listed = GridExperiment.model_validate({**data, "measures": {}})
    assert "hallucination_words" not in listed.model_dump(mode="json")["measures"]
    worded = GridExperiment.model_validate({**data, "measures": {"hallucination_words": ["tree"]}})
    assert experiment_version(worded) != experiment_version(plain)


def test_word_rules():
    words = ["tree", "treasure chest", "cave"]
    assert named_in("Caves! and a tree's shade, trees", words) == ["cave", "tree"]
    assert named_in("the street is quiet", words) == []  # whole words only
    assert named_in("two TREASURE  CHESTS here", words) == ["treasure chest"]
    assert named_in("", words) == [] and named_in("tree", []) == []


def _row(step: int, agent: int, message: str, before: tuple[int, int]) -> dict:
    return {
        "_id": uuid.uuid4().hex,
        "step": step,
        "agent": f"agent{agent}",
        "agent_index": agent,
        "message": message,
        "memory": "m",
        "move": "stay",
        "position_before": list(before),
        "position_after": list(before),
    }


def test_hallucinations_inside_clusters_and_shared_ones():
    """Agents 0 and 1 stand together (a cluster at R = 1), agent 2 alone; at step 1 agent0 and
    agent1 both name a cave (shared in a cluster), agent2 a hill; at step 2 only agent2 does."""
    cells = [(0, 0), (1, 0), (5, 5)]
    spec = {
        "world": {"width": 10, "height": 10, "agents": 3, "steps": 2, "radius": 1},
        "start": [list(c) for c in cells],
        "measures": {"hallucination_words": ["cave", "hill"]},
    }
    rows = [
        _row(1, 0, "a cave!", cells[0]),
        _row(1, 1, "Caves everywhere", cells[1]),
        _row(1, 2, "I see a hill", cells[2]),
        _row(2, 0, "hello", cells[0]),
        _row(2, 1, "hello", cells[1]),
        _row(2, 2, "hills, hills", cells[2]),
    ]
    run = GridRun({"_id": "r", "spec": spec}, rows)
    clusters = {"labels": [[0, 0, -1], [0, 0, -1], [0, 0, -1]]}
    found = hallucination_measures(run, clusters)
    assert found["per_step"] == [3, 1] and found["in_clusters_per_step"] == [2, 0]
    assert found["by_cluster"] == [{"0": 2}, {}]
    assert found["hallucinated"] == 4 and found["share"] == pytest.approx(4 / 6)
    assert found["in_clusters_share"] == pytest.approx(2 / 4)
    assert found["per_agent"] == {"agent0": 1, "agent1": 1, "agent2": 2}
    words = {w["word"]: w for w in found["words"]}
    assert words["cave"]["shared_in_cluster_steps"] == [1] and words["cave"]["agents"] == 2
    assert words["hill"]["shared_in_cluster_steps"] == [] and words["hill"]["uses"] == 2
    assert found["shared_in_clusters"] == 1
    assert hallucination_measures(run, None)["in_clusters_share"] is None  # no sklearn
