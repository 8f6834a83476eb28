"""A dynamic-network sweep killed with SIGKILL mid-round resumes to an exact finish: every run
whole, every call answered once, and the scripted DeGroot model's history equal to numpy's on
each round's own snapshot (a resumed round that used the wrong graph would differ)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from process_waits import cli_here

from simulator.services import experiments as exp_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.domain.graphs import graph_for_round
from simulator.worlds.network.domain.theory import rounded_mean
from simulator.worlds.network.engine.run import graphs_of
from simulator.worlds.network.services import sweeps as network_sweeps

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
FRIENDS = re.compile(r"Your friends' answers in the last round: (\{.*\})")
AGENTS, ROUNDS = 16, 4
DYNAMIC = {
    "type": "dynamic",
    "snapshots": ROUNDS,
    "base": {"type": "barabasi_albert", "n": AGENTS, "m": 3, "seed": 1},
    "rewire": 6,
    "seed": 9,
}


def degroot_reply(body: dict) -> str:
    shown = json.loads(FRIENDS.search(body["messages"][-1]["content"]).group(1))
    opinion = rounded_mean([answer["Opinion"] for answer in shown.values()])
    return f'{{"Thought": "follow", "Opinion": {opinion}, "Decision": "Yes"}}'


def simulator_profile(tmp_path: Path) -> Path:
    """The shipped experiment with this tool's own prompt layout, which this test reads."""
    text = NETWORK_YAML.read_text(encoding="utf-8")
    changed = text.replace("prompts:\n    profile: reference", "prompts:\n    profile: simulator")
    assert changed != text
    path = tmp_path / "llm_sam_network_simulator.yaml"
    path.write_text(changed, encoding="utf-8")
    return path


def cli(db: str, stub, *args: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "SIM_DB": db,
        "SIM_USER": "alice",
        "OPENAI_BASE_URL": stub.openai_base_url,
        "PYTHONPATH": str(REPO),
        "SIM_PROGRESS_EVERY": "1000",
    }
    return subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def dynamic_degroot(spec: NetworkSpec, start: list[int]) -> list[list[int]]:
    """Round t takes the rounded mean of the friends on snapshot t - 1."""
    graphs, history = graphs_of(spec), [start]
    for t in range(1, spec.rounds + 1):
        graph, prev = graph_for_round(graphs, t), np.array(history[-1])
        history.append([rounded_mean(prev[sorted(graph.adj[i])]) for i in range(len(start))])
    return history


@pytest.mark.slow
def test_sigkill_mid_round_then_resume(tmp_path):
    db = str(tmp_path / "store")
    with StubLLMServer(models=["stub"], latency_s=0.05) as stub:
        stub.reply_fn = degroot_reply
        store = open_store(open_database(db, "llm_simulator"))
        try:
            view = exp_service.import_yaml(store, simulator_profile(tmp_path), "alice")
            spec = network_sweeps.validate_spec(
                {
                    "llms": ["openai:stub"],
                    "graphs": [DYNAMIC],
                    "rounds": [ROUNDS],
                    "seeds": [1, 2, 3],
                }
            )
            sweep, added = network_sweeps.create(store, view, spec, "alice")
            assert added == 6  # 3 LLM runs and their 3 theory twins
        finally:
            store.close()
        total_calls = 3 * AGENTS * ROUNDS
        proc = cli(
            db, stub, "sweep", "run", sweep["_id"], "--concurrency", "2", "--pool", "openai=4"
        )
        deadline = time.monotonic() + 120
        while len(stub.chat_requests) < total_calls // 3 and time.monotonic() < deadline:
            time.sleep(0.02)  # wait for calls to have happened, not for a time
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        sent_before = len(stub.chat_requests)
        assert sent_before < total_calls  # killed mid-sweep
        resumed = cli_here(
            db, stub, "sweep", "resume", sweep["_id"], "--concurrency", "3", "--json"
        )
        out, err = resumed.stdout, resumed.stderr
        assert resumed.returncode == 0, err
        assert json.loads(out)["complete"]
        sent_after = len(stub.chat_requests) - sent_before

    store = open_store(open_database(db, "llm_simulator"))
    try:
        runs = store.sweeps.conversations(sweep["_id"])
        assert len(runs) == 6 and {r["status"] for r in runs} == {"done"}
        answered = 0
        for run in runs:
            rows = store.network_rounds.for_run(run["_id"])
            assert [(r["round"], r["agent_index"]) for r in rows] == [
                (t, a) for t in range(ROUNDS + 1) for a in range(AGENTS)
            ]
            run_spec = NetworkSpec.model_validate(run["spec"])
            assert len(run_spec.snapshots) == ROUNDS
            if run_spec.is_theory:
                continue
            history = [[r["opinion"] for r in rows if r["round"] == t] for t in range(ROUNDS + 1)]
            assert history == dynamic_degroot(run_spec, history[0])
            calls = store.calls.for_conversation(run["_id"])
            done = Counter(
                (c["purpose"], c["day"], c["agent"]) for c in calls if c["state"] == "done"
            )
            assert len(done) == AGENTS * ROUNDS and set(done.values()) == {1}
            answered += len(done)
        assert answered == total_calls
        # the resume sent only what had no stored answer (calls killed in flight are resent)
        assert sent_after <= total_calls - sent_before + 2 * 4  # 2 runs x a pool of 4 in flight
        assert max(r["claims"] for r in runs) >= 2  # some runs were taken over after the kill
    finally:
        store.close()
