"""Fork sweeps (`sweep create` with --fork-from/--fork-at/--fork-edit or a `fork:` block) through
the real entry point: 3 models x 2 repetitions branch one stored prison chat, each branch a fork
document that reads the shared prefix from the parent (nothing copied) and starts with the
researcher's edit; `sweep run` finishes them, a sweep killed with SIGKILL resumes to the
transcripts of an uninterrupted one, the plan says what it is and counts only the
continuation's calls, and every field the parent fixed is refused (exit 2, nothing stored)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fork_helpers import parent_chat, prompt_reply

from simulator.llm.access import LLMAccess
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store import lineage
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.worlds.chat.services import runs as conv_service
from simulator.worlds.grid.services import runs as grid_runs

REPO = Path(__file__).resolve().parents[2]
PRISON = REPO / "prompts" / "experiments" / "prison.yaml"
GRID = REPO / "prompts" / "experiments" / "takata_grid.yaml"
SHIPPED = REPO / "prompts" / "sweeps" / "prison_fork.yaml"
EDIT = "Let's all calm down; nobody is punished today."
MODELS = ["ollama:a", "ollama:b", "ollama:c"]
# the parent: 8 messages over 2 days (4 a day); the branches share 1:0 and 1:1, the guard's
# 1:2 is the edit, then 5 turns are the models' and both days are summarised: 7 calls each
AT, OWN_PLACES = "1:2", [(1, 2), (1, 3), (2, 0), (2, 1), (2, 2), (2, 3)]
CALLS_PER_BRANCH = 5 + 2


def make_parent(db: str) -> tuple[str, str]:
    """(experiment id, a finished guard-and-prisoner chat of it), stored as `llm-sim run` does."""
    store = open_store_uri(db)
    try:
        parent = parent_chat(store, messages=8, days=2)
        return store.conversations.get(parent)["experiment_id"], parent
    finally:
        store.close()


@pytest.fixture
def stub():
    with StubLLMServer(models=["a", "b", "c"], latency_s=0.02) as server:
        server.reply_fn = prompt_reply
        yield server


def _env(tmp_path: Path, stub: StubLLMServer, name: str = "store") -> dict[str, str]:
    return {"SIM_DB": str(tmp_path / name), "SIM_USER": "alice", "OLLAMA_HOST": stub.url}


@pytest.fixture
def env(tmp_path, stub, monkeypatch):
    env = _env(tmp_path, stub)
    monkeypatch.setenv("OLLAMA_HOST", stub.url)
    return env


@pytest.fixture
def parent(env):
    return make_parent(env["SIM_DB"])


def _create(run_cli, env, exp: str, parent_id: str, *more: str):
    llms = [arg for model in MODELS for arg in ("--llm", model)]
    args = ["sweep", "create", exp, "--fork-from", parent_id, "--fork-at", AT]
    return run_cli([*args, "--fork-edit", EDIT, *llms, "--repetitions", "2", *more], env=env)


def test_three_models_by_two_repetitions_branch_one_prefix_and_run(run_cli, env, parent):
    exp, parent_id = parent
    created = _create(run_cli, env, exp, parent_id, "--yes", "--json")
    assert created.code == 0, created.err
    result = created.json()
    sweep_id = result["sweep_id"]
    assert result["added"] == 6 and result["expected_calls"] == 6 * CALLS_PER_BRANCH
    again = _create(run_cli, env, exp, parent_id, "--yes", "--json")  # identical: adopted
    assert again.json()["sweep_id"] == sweep_id and again.json()["added"] == 0

    store = open_store_uri(env["SIM_DB"])
    try:
        parent_doc = store.conversations.get(parent_id)
        parent_messages = store.messages.for_conversation(parent_id)
        branches = store.sweeps.conversations(sweep_id)
        assert len(branches) == 6
        cells = sorted((b["agents"][0]["model"], b["fork_repetition"]) for b in branches)
        assert cells == [(m, r) for m in MODELS for r in (1, 2)]
        for doc in branches:
            assert doc["fork_of"] == parent_id and doc["fork_at"] == {"day": 1, "index": 2}
            assert doc["fork_group"] == sweep_id and doc["repetition"] == doc["fork_repetition"]
            assert doc["fork_edit"]["text"] == EDIT and doc["fork_edit"]["role"] == "Guard"
            assert doc["fork_edit"]["original_text"] == parent_messages[2]["text"]
            spec, parent_spec = doc["spec"], parent_doc["spec"]
            for name in ("agents", "total_messages", "days", "speaker_method", "variant"):
                assert spec[name] == parent_spec[name], name
            assert spec["summarizer_llm"] == parent_spec["summarizer_llm"]  # the parent's
            assert any("from the parent" in note for note in spec["defaults_applied"])
            assert store.messages.for_conversation(doc["_id"]) == []  # nothing copied
            shared = lineage.prefix(store, doc).messages
            assert [m["_id"] for m in shared] == [m["_id"] for m in parent_messages[:2]]
        # paired: repetition r runs with the parent's seed + r - 1 under every model
        seeds = {
            (b["agents"][0]["model"], b["fork_repetition"]): b["spec"]["seed"] for b in branches
        }
        assert seeds == {(m, r): 5 + r - 1 for m in MODELS for r in (1, 2)}
    finally:
        store.close()

    ran = run_cli(["sweep", "run", sweep_id, "--json"], env=env)
    assert ran.code == 0, ran.err
    assert ran.json()["counts"]["done"] == 6

    store = open_store_uri(env["SIM_DB"])
    try:
        for doc in store.sweeps.conversations(sweep_id):
            own = store.messages.for_conversation(doc["_id"])
            assert [(m["day"], m["index"]) for m in own] == OWN_PLACES  # from the fork point
            assert own[0]["edited"] and own[0]["text"] == EDIT and own[0]["speaker"] == "Guard_1"
            model = doc["agents"][0]["model"]
            assert {m["model"] for m in own[1:]} == {model}
            calls = [c for c in store.calls.for_conversation(doc["_id"]) if c["model"]]
            assert len(calls) == CALLS_PER_BRANCH
            first_turn = next(c for c in calls if c["purpose"] == "agent_turn")
            sent = " ".join(m["content"] for m in store.calls.prompt(first_turn["prompt_hash"]))
            assert EDIT in sent and parent_messages[1]["text"] in sent  # prefix and edit seen
            messages, summaries = lineage.full_transcript(store, doc)
            assert len(messages) == 8 and [s["day"] for s in summaries] == [1, 2]
        # 8 parent messages + 6 of each branch: the prefix is stored once
        assert store.db.messages.count_documents({}) == 8 + 6 * 6
    finally:
        store.close()


def test_dry_run_says_it_is_a_fork_sweep_and_counts_the_continuation(run_cli, env, parent):
    exp, parent_id = parent
    dry = _create(run_cli, env, exp, parent_id, "--dry-run")
    assert dry.code == 0, dry.err
    out = " ".join(dry.out.split())  # the console wraps long lines
    assert f"plan: fork sweep from {parent_id} at 1:2, with an edit: 6 branches; 3 LLMs" in out
    assert f"expected LLM calls: {6 * CALLS_PER_BRANCH}" in out
    assert (
        f"default: from the parent {parent_id}: agents Guard=1, Prisoner=1, total_messages 8 "
        "(agent_turns), days 2" in out
    )
    assert "default: speaker method: round_robin (not given; the parent's)" in out
    assert "default: seed: 5 (not given; the parent's)" in out
    as_json = _create(run_cli, env, exp, parent_id, "--dry-run", "--json").json()
    assert as_json["fork"]["from"] == parent_id and as_json["fork"]["shared_messages"] == 2
    assert run_cli(["sweep", "list", "--json"], env=env).json() == []  # nothing stored

    # without an edit the message at the fork point is the models' too: one more call each
    plain = run_cli(
        ["sweep", "create", exp, "--fork-from", parent_id, "--fork-at", AT, "--dry-run"], env=env
    )
    text = " ".join(plain.out.split())
    assert f"fork sweep from {parent_id} at 1:2: 1 branch;" in text
    assert f"expected LLM calls: {CALLS_PER_BRANCH + 1}" in text
    assert "agents' models: the parent's (Guard: ollama:a, Prisoner: ollama:a)" in text

    # the shipped sweep: its fork point and edit, the parent from the flag; flags win
    shipped = run_cli(
        ["sweep", "create", exp, str(SHIPPED), "--fork-from", parent_id, "--dry-run"], env=env
    )
    assert shipped.code == 0, shipped.err
    assert f"fork sweep from {parent_id} at 1:2, with an edit: 30 branches" in " ".join(
        shipped.out.split()
    )
    flags = ["--fork-at", "1:1", "--llm", "ollama:b", "--repetitions", "3", "--dry-run", "--json"]
    moved = run_cli(
        ["sweep", "create", exp, str(SHIPPED), "--fork-from", parent_id, *flags], env=env
    ).json()
    assert (moved["fork"]["at"], moved["conversations"]) == ("1:1", 3)
    assert moved["fork"]["edit"].startswith("Alright, let's stop this.")
    missing = run_cli(["sweep", "create", exp, str(SHIPPED), "--dry-run"], env=env)
    assert missing.code == 2 and "fork.from" in missing.err and "--fork-from" in missing.err


def _grid_run(db: str) -> tuple[str, str]:
    store = open_store_uri(db)
    try:
        view = exp_service.import_yaml(store, GRID, "alice")
        spec = grid_runs.build_spec(view, llm="ollama:a", seed=4, world={"agents": 3, "steps": 2})
        return view.id, run_service.create_run(store, view, spec, "alice")["_id"]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("more", "field", "said"),
    [
        (["--agents", "Guard=2,Prisoner=1"], "agents", "Guard=1, Prisoner=1"),
        (["--messages", "10"], "total_messages", "the parent's (8)"),
        (["--days", "1"], "days", "the parent's (2)"),
        (["--every-day-count"], "every_day_count", "would vary the days"),
        (["--message-counting", "reference"], "message_counting", "agent_turns"),
        (["--fork-at", "1:9"], "fork.at", "day 1 holds messages 1:0 to 1:3"),
        (["--fork-at", "3:0"], "fork.at", "it has no message on day 3"),
        (["--fork-edit", "  "], "fork.edit", "the edited message is empty"),
        (["--speaker", "auto", "--messages", "8", "--days", "2"], None, None),  # same: accepted
    ],
)
def test_what_the_parent_fixed_is_refused(run_cli, env, parent, more, field, said):
    exp, parent_id = parent
    args = ["sweep", "create", exp, "--fork-from", parent_id, "--fork-at", AT, *more]
    result = run_cli([*args, "--yes"], env=env)
    stored = run_cli(["sweep", "list", "--json"], env=env).json()
    if field is None:
        assert result.code == 0, result.err
        assert len(stored) == 1
        return
    assert result.code == 2, (result.out, result.err)
    err = " ".join(result.err.split())
    assert f"{field}:" in err and said in err and "Fix:" in err
    assert stored == []  # nothing stored


def test_a_grid_parent_another_experiment_or_a_sweep_file_that_differs_are_refused(
    run_cli, env, parent, tmp_path
):
    exp, parent_id = parent
    before = len(run_cli(["conversation", "list", "--all", "--json"], env=env).json())
    grid_exp, grid_run = _grid_run(env["SIM_DB"])
    refused = run_cli(
        ["sweep", "create", exp, "--fork-from", grid_run, "--fork-at", "1:0"], env=env
    )
    assert refused.code == 2 and f"{grid_run} is a grid run" in refused.err
    on_grid = run_cli(
        ["sweep", "create", grid_exp, "--fork-from", parent_id, "--fork-at", AT], env=env
    )
    assert on_grid.code == 2 and "grid experiment" in on_grid.err

    other = run_cli(["experiment", "import", str(PRISON), "--json"], env=env).json()["id"]
    elsewhere = run_cli(
        ["sweep", "create", other, "--fork-from", parent_id, "--fork-at", AT], env=env
    )
    assert elsewhere.code == 2
    assert f"experiment: {parent_id} is a conversation of experiment {exp}, not of {other}" in (
        " ".join(elsewhere.err.split())
    )

    body = f"fork: {{from: {parent_id}, at: '1:2'}}\nagents: {{Guard: 1, Prisoner: 3}}\n"
    (tmp_path / "fork.yaml").write_text(body + "llms: [ollama:b]\n", encoding="utf-8")
    from_file = run_cli(["sweep", "create", exp, str(tmp_path / "fork.yaml"), "--yes"], env=env)
    assert from_file.code == 2 and "agents: this sweep forks" in " ".join(from_file.err.split())

    assert run_cli(["sweep", "list", "--json"], env=env).json() == []
    after = run_cli(["conversation", "list", "--all", "--json"], env=env).json()
    assert len(after) == before + 1  # the grid run made here, nothing else


def _transcripts(db: str, sweep_id: str) -> dict[tuple, list[tuple]]:
    store = open_store_uri(db)
    try:
        found = {}
        for doc in store.sweeps.conversations(sweep_id):
            assert doc["status"] == "done", doc.get("error")
            own = store.messages.for_conversation(doc["_id"])
            assert [(m["day"], m["index"]) for m in own] == OWN_PLACES  # whole, nothing twice
            edits = [c for c in store.calls.for_conversation(doc["_id"]) if not c["model"]]
            assert len(edits) == 1  # the edit's ledger row once, however often it was claimed
            cell = (doc["agents"][0]["model"], doc["fork_repetition"])
            found[cell] = [(m["speaker"], m["text"]) for m in own]
        return found
    finally:
        store.close()


def _cli(env: dict[str, str], *args: str) -> subprocess.Popen:
    full = {**os.environ, **env, "PYTHONPATH": str(REPO), "SIM_PROGRESS_EVERY": "1000"}
    return subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), *args],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_fork_sweep_killed_mid_way_resumes_to_the_uninterrupted_transcripts(
    run_cli, tmp_path, stub, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", stub.url)
    whole, cut = _env(tmp_path, stub, "whole"), _env(tmp_path, stub, "cut")
    sweeps = {}
    for env in (whole, cut):
        exp, parent_id = make_parent(env["SIM_DB"])
        created = _create(run_cli, env, exp, parent_id, "--yes", "--json")
        assert created.code == 0, created.err
        sweeps[env["SIM_DB"]] = created.json()["sweep_id"]
    ran = run_cli(["sweep", "run", sweeps[whole["SIM_DB"]], "--json"], env=whole)
    assert ran.code == 0, ran.err

    stub.latency_s = 0.1
    sent = len(stub.chat_requests)
    proc = _cli(cut, "sweep", "run", sweeps[cut["SIM_DB"]], "--concurrency", "3")
    deadline = time.monotonic() + 60
    while len(stub.chat_requests) < sent + 14 and time.monotonic() < deadline:
        time.sleep(0.02)  # wait for calls to have happened, not for a time
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    resumed = run_cli(["sweep", "resume", sweeps[cut["SIM_DB"]], "--json"], env=cut)
    assert resumed.code == 0, resumed.err
    assert resumed.json()["counts"]["done"] == 6

    store = open_store_uri(cut["SIM_DB"])
    try:
        claims = [d["claims"] for d in store.sweeps.conversations(sweeps[cut["SIM_DB"]])]
    finally:
        store.close()
    assert max(claims) >= 2  # some branches were taken over after the kill
    expected = _transcripts(whole["SIM_DB"], sweeps[whole["SIM_DB"]])
    assert _transcripts(cut["SIM_DB"], sweeps[cut["SIM_DB"]]) == expected


def test_branches_name_the_parent_variants_they_run_with(run_cli, env):
    """A branch runs with the parent's variants where the sweep varies none; its stored cell
    and the measures' label say so, instead of '(default)'."""
    store = open_store_uri(env["SIM_DB"])
    try:
        view = exp_service.import_yaml(store, PRISON, "alice")
        spec = conv_service.build_spec(
            view, agents="guard=1,prisoner=1", total_messages=4, llm="ollama:a", seed=5
        ).model_copy(update={"variant": {"Guard/Personality": "abusive"}})

        async def go():
            llms = LLMAccess()
            try:
                doc = run_service.create_run(store, view, spec, "alice")
                return await conv_service.run(store, doc["_id"], llms)
            finally:
                await llms.aclose()

        parent_id = asyncio.run(go()).conversation_id
    finally:
        store.close()
    args = ["sweep", "create", view.id, "--fork-from", parent_id, "--fork-at", "1:2"]
    created = run_cli([*args, "--llm", "ollama:b", "--yes", "--json"], env=env)
    assert created.code == 0, created.err
    sweep_id = created.json()["sweep_id"]
    store = open_store_uri(env["SIM_DB"])
    try:
        [branch] = store.sweeps.conversations(sweep_id)
        assert branch["spec"]["variant"] == {"Guard/Personality": "abusive"}
        assert branch["cell"]["variant"] == {"Guard/Personality": "abusive"}
    finally:
        store.close()
    assert run_cli(["sweep", "run", sweep_id], env=env).code == 0
    measured = run_cli(["measures", sweep_id], env=env)
    assert measured.code == 0, measured.err
    assert "Personality=abusive" in measured.out and "(default)" not in measured.out
