"""`llm-sim conversation fork` and `conversation resume` through the real entry point: the
header says what the fork changes and which defaults it took, a refusal exits 2 with nothing
stored, `conversation show` marks shared and edited messages, and a fork killed with SIGKILL
mid-continuation resumes to exactly the transcript of an uninterrupted fork."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest
from fork_helpers import REPO, parent_chat, prompt_reply
from process_waits import PATIENCE_S, wait_until

from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer

EDIT = "Let's all calm down; nobody is punished today."


@pytest.fixture
def env(tmp_path):
    with StubLLMServer(models=["a", "b"]) as server:
        server.reply_fn = prompt_reply
        yield {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice", "OLLAMA_HOST": server.url}


@pytest.fixture
def parent(env, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", env["OLLAMA_HOST"])
    store = open_store_uri(env["SIM_DB"])
    try:
        return parent_chat(store, messages=8)
    finally:
        store.close()


def test_fork_prints_its_changes_and_show_marks_the_transcript(run_cli, env, parent):
    args = ["conversation", "fork", parent, "--at", "1:3", "--edit", EDIT, "--llm", "ollama:b"]
    forked = run_cli([*args, "--repetitions", "2", "--json"], env=env)
    assert forked.code == 0, forked.err
    result = forked.json()
    assert result["fork_of"] == parent and result["fork_at"] == {"day": 1, "index": 3}
    assert [c["seed"] for c in result["conversations"]] == [5, 6]
    assert all(c["status"] == "done" for c in result["conversations"])
    first = result["conversations"][0]["conversation_id"]

    shown = run_cli(["conversation", "show", first], env=env)
    assert shown.code == 0, shown.err
    out = " ".join(shown.out.split())  # the console wraps long lines
    assert f"fork of {parent} at 1:3 with the researcher's text there" in out
    assert f"(shared, stored in {parent})" in out
    assert f"[1:3] Prisoner_1: {EDIT} (edited by the researcher)" in out

    plain = run_cli(args, env=env)
    assert plain.code == 0, plain.err
    err = " ".join(plain.err.split())
    assert f"fork: fork of {parent} at 1:3 (day 1's message #4): shares its 3 messages" in err
    assert "default: kept from the parent: summarizer ollama:a" in err
    assert f": fork of {parent} at 1:3, done" in plain.out


def test_a_refused_fork_exits_2_and_stores_nothing(run_cli, env, parent):
    before = run_cli(["conversation", "list", "--all", "--json"], env=env).json()
    refused = run_cli(["conversation", "fork", parent, "--at", "1:9"], env=env)
    assert refused.code == 2
    err = " ".join(refused.err.split())
    assert f"{parent} has no message at 1:9: day 1 holds messages 1:0 to 1:7" in err
    assert "Fix:" in err
    after = run_cli(["conversation", "list", "--all", "--json"], env=env).json()
    assert len(after) == len(before)


def _fork_process(env: dict, parent: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), "conversation", "fork", parent, "--at", "1:2",
         "--edit", EDIT, "--llm", "ollama:b", "--json"],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _own_messages(env: dict, run_id: str) -> list[dict]:
    store = open_store_uri(env["SIM_DB"])
    try:
        return store.messages.for_conversation(run_id)
    finally:
        store.close()


def test_a_fork_killed_mid_run_resumes_to_the_uninterrupted_transcript(run_cli, env, parent):
    whole = run_cli(["conversation", "fork", parent, "--at", "1:2", "--edit", EDIT,
                     "--llm", "ollama:b", "--json"], env=env)  # fmt: skip
    assert whole.code == 0, whole.err
    uninterrupted = whole.json()["conversations"][0]["conversation_id"]
    expected = [m["text"] for m in _own_messages(env, uninterrupted)]

    gate = {"released": 2}  # answer two continuation turns, then hold every request
    release = threading.Event()  # set once the process is killed: the held handlers end

    def held(body: dict) -> str:
        if body["model"] == "b":
            if gate["released"] == 0:
                release.wait(PATIENCE_S)
            gate["released"] -= 1
        return prompt_reply(body)

    def continued(env: dict) -> str | None:
        """The fork's id once it stored the edit and two turns."""
        listed = run_cli(["conversation", "list", "--all", "--json"], env=env).json()
        forks = [c for c in listed if c.get("fork_of") == parent and c["_id"] != uninterrupted]
        if forks and len(_own_messages(env, forks[0]["_id"])) >= 3:
            return forks[0]["_id"]
        return None

    stub_env = dict(env)
    with StubLLMServer(models=["a", "b"]) as server:
        server.reply_fn = held
        stub_env["OLLAMA_HOST"] = server.url
        proc = _fork_process(stub_env, parent)
        try:
            fork_id = wait_until(proc, lambda: continued(stub_env), "two continuation turns")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            release.set()
    assert len(_own_messages(env, fork_id)) == 3  # the edit and two turns, then the kill
    resumed = run_cli(["conversation", "resume", fork_id, "--json"], env=env)
    assert resumed.code == 0, resumed.err
    assert resumed.json()["status"] == "done"
    assert [m["text"] for m in _own_messages(env, fork_id)] == expected
    edits = [m for m in _own_messages(env, fork_id) if m.get("edited")]
    assert len(edits) == 1
