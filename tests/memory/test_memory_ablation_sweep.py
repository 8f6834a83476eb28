"""The memory ablation as a grid sweep axis: the shipped prompts/sweeps/grid_memory_ablation.yaml
created against a grid experiment through the real CLI and run on the loopback stub, each level
making the calls it implies and storing memories only when it is a stream; each run's spec is
the one `llm-sim run` builds; an unknown level is refused with nothing stored; and a sweep
without the axis keeps the keys it had before the axis existed (stored sweeps resume by key)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML

from simulator.memory.domain.settings import ABLATIONS
from simulator.memory.testing.replies import memory_stream_reply
from simulator.services import experiments as exp_service
from simulator.services.world_sweeps import sweep_key
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.grid.domain.experiment import GridExperiment
from simulator.worlds.grid.domain.sweep import GridCell, GridSweepSpec, calls_per_run, cells, expand
from simulator.worlds.grid.services import runs as grid_runs

REPO = Path(__file__).resolve().parents[2]
SWEEP_YAML = REPO / "prompts" / "sweeps" / "grid_memory_ablation.yaml"
MEMORY = {"embedder": "mock:16", "reflection_threshold": 50}  # no model loaded
AGENTS, STEPS, RUNS = 6, 4, 6


@pytest.fixture
def env(tmp_path):
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = memory_stream_reply(
            insights="People greet each other (because of 0, 1)",
            message=lambda name: "hello #together",
        )
        yield {
            "SIM_DB": str(tmp_path / "store"),
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": server.openai_base_url,
        }


def _experiment_file(tmp_path: Path) -> Path:
    doc = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
    doc["memory"] = MEMORY
    path = tmp_path / "grid_memory.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _import(run_cli, env, tmp_path) -> str:
    made = run_cli(["experiment", "import", str(_experiment_file(tmp_path)), "--json"], env=env)
    assert made.code == 0, made.err
    return made.json()["id"]


def _open(env):
    return open_store(open_database(env["SIM_DB"], "llm_simulator"))


def test_each_level_makes_the_calls_it_implies(run_cli, env, tmp_path):
    exp = _import(run_cli, env, tmp_path)
    create = ["sweep", "create", exp, str(SWEEP_YAML), "--llm", "openai:stub"]
    plan = run_cli([*create, "--dry-run"], env=env)
    assert plan.code == 0, plan.err
    printed = " ".join(plan.out.split())  # the console wraps long lines
    assert "memory: full, no_reflection, no_memory; seeds: 1, 2" in printed
    # message and move per agent per step; a stream's ratings and reflections come on top
    assert f"expected LLM calls: at least {RUNS * 2 * AGENTS * STEPS:,}" in printed
    assert "sample cell: radius=25 agents=6 steps=4 llm=openai:stub memory=full" in printed
    assert "default: memory.retrieval: paper (not given)" in printed
    made = run_cli([*create, "--yes", "--json"], env=env)
    assert made.code == 0, made.err
    assert made.json()["added"] == RUNS and made.json()["cells"] == 3
    assert made.json()["expected_calls_at_least"] is True
    ran = run_cli(["sweep", "run", made.json()["sweep_id"], "--json"], env=env)
    assert ran.code == 0, ran.err
    assert ran.json()["complete"]

    store = _open(env)
    try:
        view = exp_service.get(store, exp, "alice")
        runs = store.sweeps.conversations(made.json()["sweep_id"])
        assert Counter(r["cell"]["memory"] for r in runs) == {
            "full": 2,
            "no_reflection": 2,
            "no_memory": 2,
        }
        for run in runs:
            level = run["cell"]["memory"]
            assert run["status"] == "done", run.get("error")
            assert run["cell_label"].endswith(f" memory={level}")
            purposes = Counter(c["purpose"] for c in store.calls.for_conversation(run["_id"]))
            assert purposes["grid_message"] == purposes["grid_move"] == AGENTS * STEPS
            assert "grid_memory" not in purposes  # no level here is the rolling summary
            memories = store.memories.count(run["_id"])
            if level == "full":
                assert purposes["memory_importance"] > 0 and purposes["memory_questions"] > 0
                assert purposes["memory_insights"] > 0 and memories > 0
            elif level == "no_reflection":
                assert purposes["memory_importance"] > 0 and memories > 0
                assert "memory_questions" not in purposes and "memory_insights" not in purposes
            else:
                assert set(purposes) == {"grid_message", "grid_move"} and memories == 0
            # the spec `llm-sim run` builds for the experiment with the level's memory block
            experiment = GridExperiment.model_validate(
                {**view.experiment.model_dump(), "memory": {**MEMORY, **ABLATIONS[level]}}
            )
            alone = grid_runs.build_spec(
                exp_service.ExperimentView(**{**vars(view), "experiment": experiment}),
                llm="openai:stub",
                seed=run["spec"]["seed"],
                world={"agents": AGENTS, "steps": STEPS, "radius": 25},
            )
            assert run["spec"] == alone.model_dump(mode="json")
            # the run keeps the experiment as saved; its spec says what memory it ran with
            assert run["experiment"] == view.experiment.model_dump(mode="json")
        full = next(r for r in runs if r["cell"]["memory"] == "full")
        assert full["spec"]["memory"] == {
            "kind": "stream",
            "retrieval": "paper",
            "top_k": 10,
            "reflection": True,
            "planning": True,
            "reflection_threshold": 50,  # the experiment's, kept
            "embedder": "mock:16",  # the experiment's, kept
            "minutes_per_step": 10,
            # retrieval as the paper ranks
            "weights": {"recency": 1.0, "importance": 1.0, "relevance": 1.0},
            "recency_decay": 0.995,
            "recency": "hours",
            "candidates": "all",
            # planning and reacting as the paper and the reference code
            "plan_levels": 3,
            "react": "every_step",
            "talk": True,
            "talk_turns": 16,
        }
        assert "memory.top_k: 10 (not given)" in full["spec"]["defaults_applied"]
        none = next(r for r in runs if r["cell"]["memory"] == "no_memory")
        assert none["spec"]["memory"]["kind"] == "none"
        assert not any(n.startswith("memory.") for n in none["spec"]["defaults_applied"])
    finally:
        store.close()


def test_an_unknown_level_is_refused_and_nothing_is_stored(run_cli, env, tmp_path):
    exp = _import(run_cli, env, tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: grid\nsteps: [2]\nmemory: [full, no_reflections]\n", encoding="utf-8")
    refused = run_cli(["sweep", "create", exp, str(bad), "--llm", "openai:stub", "--yes"], env=env)
    assert refused.code == 2
    assert "memory[1]" in refused.err and "'no_reflections' is not a memory level" in refused.err
    assert "full, no_reflection, no_reflection_no_planning, no_memory, summary" in refused.err
    flag = ["sweep", "create", exp, "--llm", "openai:stub", "--memory", "full,most", "--yes"]
    refused = run_cli(flag, env=env)
    assert refused.code == 2 and "'most' is not a memory level" in refused.err
    twice = run_cli([*flag[:-2], "full,full", "--yes"], env=env)
    assert twice.code == 2 and "memory lists a value twice" in twice.err
    store = _open(env)
    try:
        assert store.sweeps.list() == [] and store.conversations.list() == []
    finally:
        store.close()


def test_the_memory_flag_and_the_summary_level(run_cli, env, tmp_path):
    exp = _import(run_cli, env, tmp_path)
    args = ["sweep", "create", exp, "--llm", "openai:stub", "--agents", "3", "--steps", "2"]
    plan = run_cli([*args, "--memory", "summary,no_memory", "--dry-run", "--json"], env=env)
    assert plan.code == 0, plan.err
    # summary: message, memory and move; none: message and move; both counted exactly
    assert plan.json()["expected_calls"] == 3 * 3 * 2 + 2 * 3 * 2
    assert plan.json()["expected_calls_at_least"] is False
    chat = run_cli(["sweep", "create", exp, "--memory", "full", "--days", "2"], env=env)
    assert chat.code == 2 and "--days belong to group chats" in chat.err


def test_cells_labels_and_calls_per_level():
    experiment = GridExperiment.model_validate(yaml.safe_load(GRID_YAML.read_text("utf-8")))
    spec = GridSweepSpec(steps=[3], memory=["full", "summary"], seeds=[1, 2])
    assert spec.size(1) == 4
    made = cells(spec, experiment)
    assert [c.label() for c in made] == [
        "radius=5 agents=10 steps=3 llm=local:smollm2 memory=full",
        "radius=5 agents=10 steps=3 llm=local:smollm2 memory=summary",
    ]
    assert made[0].as_dict()["memory"] == "full"
    assert calls_per_run(made[0], "stream") == 2 * 10 * 3
    assert calls_per_run(made[1], "summary") == 3 * 10 * 3
    assert "memory" not in GridCell("m", 1, 1, 1).as_dict()


def test_a_sweep_without_the_memory_axis_keeps_its_keys():
    """The keys these specs had before the memory axis existed (computed then, at commit
    2d379ad): a stored sweep is found again, and resumed, by them."""
    experiment = GridExperiment.model_validate(yaml.safe_load(GRID_YAML.read_text("utf-8")))
    version = SimpleNamespace(version="v1")
    spec = GridSweepSpec(
        llms=["openai:stub"], agents=[4], steps=[4], radius=[0, 5, 25], seeds=[1, 2]
    )
    assert "memory" not in spec.model_dump(mode="json")
    assert [(p.cell_key, p.key) for p in expand(spec, experiment, "v1", "alice")] == [
        ("9c7e7906e3ba6c2c", "g_9449786a666123ab1a2964a8"),
        ("9c7e7906e3ba6c2c", "g_ed1492516dd95e28acbc13a3"),
        ("7d2826f80f6ba094", "g_09d3a639268055bd95010414"),
        ("7d2826f80f6ba094", "g_15bb65d9e15697ac00d828a8"),
        ("1010b5c8d4323b4e", "g_812bc4d8c18210305dcd50ef"),
        ("1010b5c8d4323b4e", "g_b6031b1b571e36be600740bc"),
    ]
    assert [p.cell.label() for p in expand(spec, experiment, "v1", "alice")][::2] == [
        "radius=0 agents=4 steps=4 llm=openai:stub",
        "radius=5 agents=4 steps=4 llm=openai:stub",
        "radius=25 agents=4 steps=4 llm=openai:stub",
    ]
    assert sweep_key(version, spec, "alice") == "s_55d745bb177686011b09"
    repeated = GridSweepSpec(radius=[3], seed=7, repetitions=2)
    assert [p.key for p in expand(repeated, experiment, "v1", "alice")] == [
        "g_7dd6ac874821015cd47603b5",
        "g_148313ff14a1ea2655a14044",
    ]
    assert sweep_key(version, repeated, "alice") == "s_ba5f9dc73be5294f79f0"
    # a stored spec (no `memory`) reads back to the same spec and key
    again = GridSweepSpec.model_validate(spec.model_dump(mode="json"))
    assert again == spec and sweep_key(version, again, "alice") == "s_55d745bb177686011b09"
