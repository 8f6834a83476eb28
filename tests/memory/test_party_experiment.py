"""The shipped party experiment (prompts/experiments/party_grid.yaml) imports, and runs its
first hours on the loopback stub with every part of the memory stream at work: the host's seed
memories rated at step 0, plans, the invitation heard and remembered."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import REPO, run_grid

from simulator.domain.grid_experiment import GridExperiment
from simulator.services import experiments as exp_service
from simulator.services import grid_runs
from simulator.testing import StubLLMServer
from simulator.testing.memory_replies import memory_stream_reply

PARTY = REPO / "prompts" / "experiments" / "party_grid.yaml"


@pytest.fixture
def stub(monkeypatch):
    def message(name: str) -> str:
        return "Come to my party at the cafe at 17:00!" if name == "agent0" else "Hello there."

    with StubLLMServer(models=["stub"], latency_s=0.01) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = memory_stream_reply(rating="6", move="stay", message=message)
        yield server


def test_the_party_runs_its_first_hours_with_the_whole_memory_stream(store, stub, tmp_path):
    view = exp_service.import_yaml(store, PARTY, "alice")
    experiment = view.experiment
    assert isinstance(experiment, GridExperiment) and experiment.memory.kind == "stream"
    assert len(experiment.personas) == experiment.world.agents == 8
    # the embedder is the packaged MiniLM by default; mock vectors keep the test model-free
    experiment.memory.embedder = "mock:32"
    world = {"steps": 2, "radius": 10}  # everyone within earshot of the host at step 1
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world=world)
    assert "memory.embedder: minilm (not given)" not in spec.defaults_applied
    run_id = grid_runs.create(store, view, spec, "alice")["_id"]
    assert run_grid(store, run_id).status == "done"
    calls = store.calls.for_conversation(run_id)
    purposes = Counter(c["purpose"] for c in calls)
    assert purposes["memory_plan"] == 8 and purposes["memory_plan_hours"] == 8
    host = store.memories.stream(run_id, 0)
    assert host[0].text.startswith("I am hosting a party") and host[0].created == 0
    rows = [r for r in store.grid_steps.for_run(run_id) if r["step"] == 1]
    heard = {r["agent"] for r in rows if "agent0" in r["heard_from"]}
    assert heard == {f"agent{i}" for i in range(1, 8)}
    for name in heard:
        index = int(name.removeprefix("agent"))
        texts = [r.text for r in store.memories.stream(run_id, index)]
        assert "agent0 said: Come to my party at the cafe at 17:00!" in texts
