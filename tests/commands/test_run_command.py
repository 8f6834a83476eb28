"""`llm-sim run`, `conversation …` and `demo` through the real entry point.

In-process (`sim`) unless a real process is the point: the bundled model's demo and the API key
test run in a subprocess (`sim_process`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.testing import StubLLMServer


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub", "llama3"]) as server:
        yield server


@pytest.fixture
def experiment(sim, tmp_path, prison_path):
    db = str(tmp_path / "store")
    exp_id = sim("experiment", "create", str(prison_path), "--json", db=db).json()["id"]
    return db, exp_id


def test_run_on_stub_prints_plain_lines_and_stores(sim, stub, experiment):
    db, exp_id = experiment
    env = {"OPENAI_BASE_URL": stub.openai_base_url, "OLLAMA_HOST": stub.url}
    result = sim(
        "run",
        exp_id,
        "--agents",
        "guard=1,prisoner=1",
        "--messages",
        "4",
        "--days",
        "2",
        "--llm",
        "openai:stub",
        "--llm-for",
        "prisoner=ollama:llama3",
        db=db,
        env=env,
    )
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert sum(1 for line in lines if line.startswith(("[1:", "[2:"))) == 4  # as `show` numbers
    assert sum(1 for line in lines if line.startswith("[day ")) == 2  # the summaries
    assert "--- day 2 ---" in lines
    assert "4 messages over 2 days: 2, 2" in result.err

    listed = sim("conversation", "list", "--json", db=db).json()
    assert len(listed) == 1 and listed[0]["status"] == "done"
    conv_id = listed[0]["_id"]
    shown = sim("conversation", "show", conv_id, "--json", "--prompts", db=db).json()
    assert [m["model"] for m in shown["messages"]] == ["openai:stub", "ollama:llama3"] * 2
    assert all(call["messages"][0]["role"] == "system" for call in shown["calls"])
    human = sim("conversation", "show", conv_id, "--prompts", db=db)
    assert "Day 2" in human.out and "summary of day 1" in human.out and "system:" in human.out

    assert sim("conversation", "delete", conv_id, "--yes", user="bob", db=db).code == 2
    assert sim("conversation", "favourite", conv_id, user="bob", db=db).code == 0
    assert sim("conversation", "delete", conv_id, "--yes", db=db).code == 0
    assert sim("conversation", "list", "--json", db=db).json() == []


def test_run_json_prints_only_the_result(sim, stub, experiment):
    db, exp_id = experiment
    result = sim(
        "run",
        exp_id,
        "--agents",
        "guard=2,prisoner=1",
        "--messages",
        "4",
        "--speaker",
        "role_alternating",
        "--llm",
        "openai:stub",
        "--json",
        db=db,
        env={"OPENAI_BASE_URL": stub.openai_base_url},
    )
    assert result.code == 0, result.err
    data = result.json()
    assert data["status"] == "done" and data["counters"]["messages"] == 4


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (("--agents", "warden=1", "--messages", "4"), {}, "unknown role 'warden'"),
        (("--agents", "guard=0", "--messages", "4"), {}, "'guard=0' needs a whole number"),
        (("--agents", "guard=1", "--messages", "1"), {}, "greater than or equal to 2"),
        (("--agents", "guard=1", "--messages", "4", "--days", "3"), {}, "3 days need at least 6"),
        (("--agents", "guard=1", "--messages", "4", "--llm", "olama:x"), {}, "ollama"),
        (
            ("--agents", "guard=1", "--messages", "4", "--llm", "ollama:llama3"),
            {"OLLAMA_HOST": "http://127.0.0.1:9"},
            "OLLAMA_HOST",
        ),
        (
            ("--agents", "guard=1", "--messages", "4", "--llm", "openai:gpt-4o-mini"),
            {},
            "OPENAI_API_KEY",
        ),
    ],
)
def test_bad_run_input_exits_2_and_writes_nothing(sim, experiment, args, env, expected):
    db, exp_id = experiment
    result = sim("run", exp_id, *args, db=db, env=env)
    assert result.code == 2, result.err
    assert expected in result.err
    assert "Traceback" not in result.err
    assert sim("conversation", "list", "--json", db=db).json() == []


def test_demo_imports_the_shipped_experiment_once(sim):
    """The demo on the mock model, from a folder outside the repository (cwd is a temp dir)."""
    args = ("demo", "--messages", "4", "--days", "2", "--llm", "mock:demo", "--json")
    first = sim(*args)
    assert first.code == 0, first.err
    assert first.json()["status"] == "done" and first.json()["counters"]["summaries"] == 2
    listed = sim("experiment", "list", "--json").json()
    assert [e["name"] for e in listed] == ["Prison experiment"]
    again = sim(*args)
    assert again.code == 0, again.err
    assert len(sim("experiment", "list", "--json").json()) == 1  # imported once
    shown = sim("conversation", "show", again.json()["conversation_id"], "--json").json()
    assert shown["messages"][0]["model"] == "mock:demo"


def test_api_key_never_reaches_the_store_logs_or_screen(
    sim, sim_process, stub, experiment, isolated_settings
):
    db, exp_id = experiment
    secret = "sk-test-SECRET-0123456789abcdef"
    stub.require_api_key = secret
    env = {"OPENAI_BASE_URL": stub.openai_base_url, "OPENAI_API_KEY": secret}
    args = (
        "run",
        exp_id,
        "--agents",
        "guard=1,prisoner=1",
        "--messages",
        "2",
        "--llm",
        "openai:stub",
    )
    result = sim_process(*args, db=db, env=env)
    assert result.code == 0, result.err
    assert secret not in result.out + result.err
    stored = b"".join(p.read_bytes() for p in Path(db).rglob("*") if p.is_file())
    assert stored and secret.encode() not in stored
    logs = "".join(p.read_text() for p in (isolated_settings / "logs").rglob("*.log"))
    assert secret not in logs
    stub.require_api_key = "another-key"
    refused = sim(*args, db=db, env=env)  # the server echoes the key it refused
    assert refused.code != 0 and secret not in refused.out + refused.err
    logs = "".join(p.read_text() for p in (isolated_settings / "logs").rglob("*.log"))
    assert "rejected the API key" in logs  # the refusal was logged, without the key
    assert secret not in logs
