"""`llm-sim conversation replay` through the real entry point: the verdict in plain lines and
in --json, the diff of a changed reply, and another model refused with exit 2 and nothing
stored unless --force, which prints the warning."""

from __future__ import annotations

import pytest
from replay_helpers import PRISON, PromptReplies

from simulator.testing import StubLLMServer


@pytest.fixture
def replies():
    return PromptReplies()


@pytest.fixture
def env(tmp_path, replies):
    with StubLLMServer(models=["stub", "other"]) as server:
        server.reply_fn = replies
        yield {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice", "OLLAMA_HOST": server.url}


def _runs(run_cli, env) -> list[str]:
    return [c["_id"] for c in run_cli(["conversation", "list", "--all", "--json"], env=env).json()]


def test_replay_verdicts_and_the_refusal(run_cli, env, replies):
    exp = run_cli(["experiment", "import", str(PRISON), "--json"], env=env).json()["id"]
    args = ["run", exp, "--agents", "guard=1,prisoner=1", "--messages", "3", "--seed", "9"]
    ran = run_cli([*args, "--llm", "ollama:stub", "--json"], env=env)
    assert ran.code == 0, ran.err
    original = ran.json()["conversation_id"]

    replies.restart()
    same = run_cli(["conversation", "replay", original, "--json"], env=env)
    assert same.code == 0, same.err
    verdict = same.json()
    assert verdict["verdict"] == "identical" and verdict["replay_of"] == original
    assert verdict["replay_id"] in _runs(run_cli, env) and verdict["status"] == "done"

    replies.restart(change_at=1)
    changed = run_cli(["conversation", "replay", original], env=env)
    assert changed.code == 0, changed.err
    assert f": replay of {original}, done" in changed.out
    assert "verdict: diverged after 0 identical calls" in changed.out
    assert "+CHANGED: I will not say what I said before." in changed.out
    assert f"replay: replay of {original} (chat)" in changed.err

    before = _runs(run_cli, env)
    refused = run_cli(["conversation", "replay", original, "--llm", "ollama:other"], env=env)
    assert refused.code == 2
    assert "not the one" in refused.err and "--force" in refused.err
    assert _runs(run_cli, env) == before  # nothing stored

    replies.restart()
    forced = run_cli(
        ["conversation", "replay", original, "--llm", "ollama:other", "--force"], env=env
    )
    assert forced.code == 0, forced.err
    assert "warning: the model of this replay is not the one" in forced.err
    assert "model: every call on ollama:other (--llm)" in forced.err
    assert "verdict: identical" in forced.out
    assert len(_runs(run_cli, env)) == len(before) + 1
