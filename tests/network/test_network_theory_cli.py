"""The theory's switches as a user meets them: `llm-sim run EXP --theory` prints each one,
stores every one with the run and exports them; a switch that cannot work on the graph is
refused with exit 2 and nothing stored; and the table's lambda reads as LLM-SAM's cost."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import in_process
import pytest

from simulator.store.store import open_store_uri

REPO = Path(__file__).resolve().parents[2]
HEADER = "name,a,tau,f,lambda,O_initial,A_initial,O_initial_text"


def llm_sim(db: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"SIM_DB": str(db), "SIM_USER": "alice", "HF_HUB_OFFLINE": "1"}
    return in_process.llm_sim(*args, env=env)


def _table(path: Path, lam: float) -> Path:
    """50 agents at opinion 0.75, all starting at No, the same lambda."""
    rows = [f"P{i},0.5,0.3,0.2,{lam},0.75,0,fine" for i in range(50)]
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def experiment(tmp_path) -> tuple[Path, str]:
    db = tmp_path / "db"
    yaml = tmp_path / "exp.yaml"
    yaml.write_text(
        "kind: network\nname: twin\nllms:\n- model: local:smollm2\nnetwork:\n"
        "  graph: {type: barabasi_albert, n: 50, m: 5, seed: 1}\n"
        f"  agents: {_table(tmp_path / 'l05.csv', 0.5)}\n"
        "  scenario: costly_purchase\n  rounds: 10\n",
        encoding="utf-8",
    )
    imported = llm_sim(db, "experiment", "import", str(yaml), "--json")
    assert imported.returncode == 0, imported.stderr
    return db, json.loads(imported.stdout)["id"]


def _run_id(stderr: str) -> str:
    found = re.findall(r"^(conv_\w+) done$", stderr, flags=re.M)
    assert len(found) == 1, stderr
    return found[0]


def _share_yes(db: Path, exp_id: str, table: Path) -> float:
    done = llm_sim(db, "run", exp_id, "--theory", "--seed", "3", "--agents-table", str(table))
    assert done.returncode == 0, done.stderr
    run_id = _run_id(done.stdout + done.stderr)
    store = open_store_uri(str(db))
    try:
        rows = [r for r in store.network_rounds.for_run(run_id) if r["round"] == 10]
    finally:
        store.close()
    return sum(r["decision"] == "Yes" for r in rows) / len(rows)


def test_the_tables_lambda_is_the_cost_higher_adopts_less(experiment, tmp_path):
    db, exp_id = experiment
    shares = [_share_yes(db, exp_id, _table(tmp_path / f"l{k}.csv", k / 10)) for k in (1, 5, 9)]
    assert shares == [1.0, 1.0, 0.0]


def test_each_switch_is_printed_stored_and_exported(experiment, tmp_path):
    db, exp_id = experiment
    done = llm_sim(db, "run", exp_id, "--theory", "--seed", "3")
    assert done.returncode == 0, done.stderr
    for phrase in (
        "opinion weight 0.5",
        "communication A/d",
        "stubborn innovators 0",
        "schedule sweep (every agent updates once a round, in a random order)",
        "50 updates per round (each agent once)",
    ):
        assert f"default: theory: {phrase}" in done.stderr
    run_id = _run_id(done.stdout + done.stderr)
    store = open_store_uri(str(db))
    try:
        theory = store.conversations.get(run_id)["spec"]["settings"]["theory"]
    finally:
        store.close()
    assert theory["schedule"] == "sweep" and theory["communication"] == "A/d"
    assert theory["stubborn"] == 0 and theory["opinion_weight"] == 0.5
    out = tmp_path / "out"
    exported = llm_sim(db, "export", exp_id, "-o", str(out), "--json")
    assert exported.returncode == 0, exported.stderr
    runs = [json.loads(line) for line in (out / "network_runs.jsonl").read_text().splitlines()]
    params = json.loads(runs[0]["theory_params"])
    assert params["schedule"] == "sweep" and params["communication_degree"] == 4


@pytest.mark.parametrize(
    ("theory", "field"),
    [
        ({"stubborn": 50}, "network.theory.stubborn"),
        ({"communication": "rrg_walk", "communication_degree": 5}, "communication_degree"),
        ({"updates_per_round": 10, "schedule": "sweep"}, "updates_per_round"),
    ],
)
def test_a_switch_that_cannot_work_is_refused_and_nothing_stored(tmp_path, theory, field):
    db = tmp_path / "db"
    table = _table(tmp_path / "t.csv", 0.5)
    yaml = tmp_path / "bad.yaml"
    body = {
        "kind": "network",
        "name": "bad",
        "llms": [{"model": "local:smollm2"}],
        "network": {
            "graph": {"type": "complete", "n": 5} if "communication" in theory else None,
            "agents": str(table),
            "theory": theory,
        },
    }
    if body["network"]["graph"] is None:
        del body["network"]["graph"]
    yaml.write_text(json.dumps(body), encoding="utf-8")
    imported = llm_sim(db, "experiment", "import", str(yaml), "--json")
    if imported.returncode == 2:  # refused where the file is read: it names the field
        assert field in imported.stderr
        return
    assert imported.returncode == 0, imported.stderr
    exp_id = json.loads(imported.stdout)["id"]
    refused = llm_sim(db, "run", exp_id, "--theory", "--seed", "1")
    assert refused.returncode == 2, refused.stderr
    assert field in refused.stderr
    store = open_store_uri(str(db))
    try:
        assert store.conversations.ids(exp_id) == []
    finally:
        store.close()
