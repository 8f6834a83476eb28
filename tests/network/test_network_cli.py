"""`llm-sim run` of the shipped network experiment as a user starts it: header, round lines,
the stored rows, and a flag of another kind refused with exit 2 and nothing written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import in_process
import pytest

from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"


def always_six(body: dict) -> str:
    return 'Fine. {"Thought": "good value", "Opinion": 6, "Decision": "Yes"}'


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub"], latency_s=0.01) as server:
        server.reply_fn = always_six
        yield server


def llm_sim(db: Path, stub, *args: str) -> subprocess.CompletedProcess:
    env = {"SIM_DB": str(db), "SIM_USER": "alice", "OPENAI_BASE_URL": stub.openai_base_url}
    return in_process.llm_sim(*args, env=env)


def test_run_of_the_shipped_network_experiment(tmp_path, stub):
    db = tmp_path / "db"
    imported = llm_sim(db, stub, "experiment", "import", str(NETWORK_YAML), "--json")
    assert imported.returncode == 0, imported.stderr
    exp_id = json.loads(imported.stdout)["id"]

    refused = llm_sim(db, stub, "run", exp_id, "--llm", "openai:stub", "--radius", "3")
    assert refused.returncode == 2
    assert "--radius" in refused.stderr and "opinion-network" in refused.stderr

    done = llm_sim(db, stub, "run", exp_id, "--llm", "openai:stub", "--rounds", "2")
    assert done.returncode == 0, done.stderr
    assert "network: 50 agents, graph barabasi_albert" in done.stderr
    assert "default: seed: none (sampling is not reproducible)" in done.stderr
    assert "round 2: mean opinion 6.00, Yes 100%" in done.stderr

    store = open_store_uri(str(db))
    try:
        rows_by_run = {
            run_id: store.network_rounds.for_run(run_id)
            for run_id in store.conversations.ids(exp_id)
        }
    finally:
        store.close()
    assert len(rows_by_run) == 1  # the refused run wrote nothing
    (rows,) = rows_by_run.values()
    assert len(rows) == 150 and {r["opinion"] for r in rows if r["round"] > 0} == {6}


def test_pool_flag_caps_the_calls_in_flight_and_a_bad_one_is_refused(tmp_path, stub):
    db = tmp_path / "db"
    imported = llm_sim(db, stub, "experiment", "import", str(NETWORK_YAML), "--json")
    exp_id = json.loads(imported.stdout)["id"]

    bad = llm_sim(db, stub, "run", exp_id, "--llm", "openai:stub", "--pool", "openai")
    assert bad.returncode == 2 and "--pool" in bad.stderr and "ENDPOINT=N" in bad.stderr

    capped = llm_sim(
        db, stub, "run", exp_id, "--llm", "openai:stub", "--rounds", "1", "--pool", "openai=3"
    )
    assert capped.returncode == 0, capped.stderr
    assert stub.max_in_flight == 3  # 50 agents asked at once, 3 calls at a time


def test_theory_run_from_the_cli_says_its_defaults_and_refuses_a_model(tmp_path, stub):
    db = tmp_path / "db"
    imported = llm_sim(db, stub, "experiment", "import", str(NETWORK_YAML), "--json")
    exp_id = json.loads(imported.stdout)["id"]

    for extra in (["--llm", "openai:stub"], ["--pool", "openai=4"]):
        refused = llm_sim(db, stub, "run", exp_id, "--theory", *extra)
        assert refused.returncode == 2 and extra[0] in refused.stderr

    done = llm_sim(db, stub, "run", exp_id, "--theory", "--seed", "4")
    assert done.returncode == 0, done.stderr
    assert "(no model calls)" in done.stderr
    assert "model: none: the coevolution theory (Zino, Ye, Cao)" in done.stderr
    for phrase in ("alpha 0", "mu 0", "rationality infinite (best response)"):
        assert f"default: theory: {phrase}\n" in done.stderr
    assert "round 2: mean opinion" in done.stderr and "round 3" not in done.stderr
    assert stub.max_in_flight == 0  # no model was asked anything

    store = open_store_uri(str(db))
    try:
        (run_id,) = store.conversations.ids(exp_id)  # the refusals wrote nothing
        run = store.conversations.get(run_id)
        assert run["spec"]["model"] == "theory" and run["spec"]["seed"] == 4
        assert run["counters"]["calls"] == 0
    finally:
        store.close()


def simulator_profile(tmp_path: Path) -> Path:
    """The shipped experiment with this tool's own prompt layout, which this test reads."""
    text = NETWORK_YAML.read_text(encoding="utf-8")
    changed = text.replace("prompts:\n    profile: reference", "prompts:\n    profile: simulator")
    assert changed != text
    path = tmp_path / "llm_sam_network_simulator.yaml"
    path.write_text(changed, encoding="utf-8")
    return path


def test_free_chat_flag_turns_a_round_into_a_chat_round_and_a_bad_one_is_refused(tmp_path, stub):
    db = tmp_path / "db"
    experiment = simulator_profile(tmp_path)
    imported = llm_sim(db, stub, "experiment", "import", str(experiment), "--json")
    exp_id = json.loads(imported.stdout)["id"]
    base = ("run", exp_id, "--llm", "openai:stub", "--rounds", "1")

    bad = llm_sim(db, stub, *base, "--free-chat", "one")
    assert bad.returncode == 2 and "--free-chat" in bad.stderr

    chat = llm_sim(db, stub, *base, "--free-chat", "1", "--json")
    assert chat.returncode == 0, chat.stderr
    assert len(stub.chat_requests) == 50 + 50  # a message then an answer per agent
    off = llm_sim(db, stub, *base, "--free-chat", "none", "--json")
    assert off.returncode == 0, off.stderr
    assert len(stub.chat_requests) == 100 + 50

    store = open_store_uri(str(db))
    try:
        chat_id, off_id = (json.loads(p.stdout)["conversation_id"] for p in (chat, off))
        said = [r for r in store.network_rounds.for_run(chat_id) if "said" in r]
        assert {r["round"] for r in said} == {1} and len(said) == 50
        assert not any("said" in r for r in store.network_rounds.for_run(off_id))
    finally:
        store.close()
