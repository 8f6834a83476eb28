"""The same model twice with different sampling parameters, told apart by labels (the reference
allowed it): `--llm LABEL` runs that entry's parameters, and the ledger and transcript name it."""

from __future__ import annotations

import pytest
import yaml

from simulator.testing import StubLLMServer

LLMS = [
    {"model": "openai:stub", "label": "cold", "params": {"temperature": 0.1, "top_p": 0.5}},
    {"model": "openai:stub", "label": "hot", "params": {"temperature": 1.5, "top_k": 40}},
]


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub"]) as server:
        yield server


@pytest.fixture
def labelled(sim, tmp_path, prison_path):
    """The shipped prison experiment with two labelled entries of one model."""
    data = yaml.safe_load(prison_path.read_text())
    data["llms"] = LLMS
    path = tmp_path / "labelled.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    db = str(tmp_path / "store")
    created = sim("experiment", "create", str(path), "--json", db=db)
    assert created.code == 0, created.err
    return db, created.json()["id"]


def test_run_with_a_label_uses_that_entrys_parameters(sim, stub, labelled):
    db, exp_id = labelled
    env = {"OPENAI_BASE_URL": stub.openai_base_url}
    result = sim(
        "run",
        exp_id,
        "--agents",
        "guard=1,prisoner=1",
        "--messages",
        "2",
        "--llm",
        "hot",
        "--llm-for",
        "prisoner=cold",
        db=db,
        env=env,
    )
    assert result.code == 0, result.err
    assert "models: Guard: openai:stub as hot, Prisoner: openai:stub as cold" in result.err

    turns = [r.body for r in stub.chat_requests if "Summarize" not in str(r.body["messages"])]
    guard, prisoner = turns[0], turns[1]
    assert guard["model"] == "stub" and guard["temperature"] == 1.5 and guard["top_k"] == 40
    assert prisoner["temperature"] == 0.1 and prisoner["top_p"] == 0.5

    conv_id = sim("conversation", "list", "--json", db=db).json()[0]["_id"]
    shown = sim("conversation", "show", conv_id, "--json", "--prompts", db=db).json()
    agent_calls = [c for c in shown["calls"] if c["purpose"] == "agent_turn"]
    assert [c["llm_label"] for c in agent_calls] == ["hot", "cold"]
    assert all(c["model"] == "openai:stub" for c in agent_calls)
    assert [m["llm_label"] for m in shown["messages"]] == ["hot", "cold"]
    assert [a["llm_label"] for a in shown["conversation"]["agents"]] == ["hot", "cold"]


def test_the_bare_model_string_is_ambiguous_and_refused(sim, labelled):
    db, exp_id = labelled
    result = sim(
        "run",
        exp_id,
        "--agents",
        "guard=1,prisoner=1",
        "--messages",
        "2",
        "--llm",
        "openai:stub",
        db=db,
    )
    assert result.code == 2, result.err
    assert "openai:stub is listed 2 times in the experiment, as cold, hot" in result.err
    assert "--llm cold" in result.err
    assert sim("conversation", "list", "--json", db=db).json() == []


def test_labels_show_and_round_trip(sim, labelled, tmp_path):
    db, exp_id = labelled
    shown = " ".join(sim("experiment", "show", exp_id, db=db).out.split())  # rich wraps lines
    assert "openai:stub as cold {'temperature': 0.1, 'top_p': 0.5}" in shown
    assert "openai:stub as hot" in shown
    exported = sim("experiment", "export", exp_id, db=db).out
    assert yaml.safe_load(exported)["llms"] == LLMS
    path = tmp_path / "again.yaml"
    path.write_text(exported)
    again = sim("experiment", "create", str(path), "--json", db=db).json()["id"]
    assert sim("experiment", "export", again, db=db).out == exported


def test_the_menu_asks_for_a_label_only_where_one_is_needed():
    """The interactive LLM editor checks a label like a YAML file's `label:` and against the
    entries already listed."""
    from simulator.cli.interactive.llms import describe, key_of, label_problem

    taken = ["ollama:llama3"]
    assert "give this one a label" in label_problem("ollama:llama3", "", taken, required=True)
    assert label_problem("ollama:llama3", "", ["hot"], required=False) is None
    assert label_problem("ollama:llama3", "hot", taken, required=True) is None
    assert label_problem("ollama:llama3", "hot", ["hot"], required=False) == (
        "hot is already in the list"
    )
    entry = {"model": "ollama:llama3", "label": "hot", "params": {"temperature": 1.5}}
    assert key_of(entry) == "hot" and key_of({"model": "ollama:llama3"}) == "ollama:llama3"
    assert describe(entry) == "ollama:llama3 as hot (temperature=1.5)"
