"""Deleting an experiment or a conversation takes what hangs on it, as the reference tool did,
after a confirmation that counts it; nothing else (another experiment, another tool's documents)
is touched, and stored prompts no remaining call uses are collected."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pexpect
import pytest

from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing.reference_fixture import build_prison_database, reference_hashes
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
PER_CONVERSATION = ("messages", "calls", "summaries", "scores")


@pytest.fixture
def shared(store_uri, run_cli):
    """A database with the reference tool's documents; `cli(*args, user=)` runs llm-sim on it
    and `store` is this tool's view of it."""
    db_name = f"t_{uuid.uuid4().hex[:10]}"
    build_prison_database(open_database(store_uri, db_name).db)
    store = open_store(open_database(store_uri, db_name))

    def cli(*args: str, user: str = "alice"):
        env = {"SIM_DB": store_uri, "SIM_DB_NAME": db_name, "SIM_USER": user}
        return run_cli(list(args), env=env)

    yield cli, store
    store.close()


def _run(cli, exp_id: str, user: str = "alice", days: str = "2") -> str:
    result = cli(
        "run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "4", "--days", days,
        "--llm", "mock:a", "--seed", "5", "--json", user=user,
    )  # fmt: skip
    assert result.code == 0, result.err
    return result.json()["conversation_id"]


def _hanging(store, conversation_ids: list[str]) -> dict[str, int]:
    query = {"conversation_id": {"$in": conversation_ids}}
    return {name: store.db[name].count_documents(query) for name in PER_CONVERSATION}


def _prompts_match_calls(store) -> None:
    """Every remaining call finds its prompt, and no stored prompt is left without a call."""
    used = {c["prompt_hash"] for c in store.db.calls.find({}, {"prompt_hash": 1})}
    stored = {p["_id"] for p in store.db.prompts.find({}, {"_id": 1})}
    assert used and stored == used


def test_experiment_delete_takes_everything_that_hangs_on_it(shared, prison_path):
    cli, store = shared
    foreign = reference_hashes(store.db)
    exp_id = cli("experiment", "create", str(prison_path), "--json").json()["id"]
    kept_id = cli("experiment", "duplicate", exp_id, "--json").json()["id"]  # same prompts
    mine, bobs = _run(cli, exp_id), _run(cli, exp_id, user="bob")
    kept_conversation = _run(cli, kept_id)
    view = exp_service.get(store, exp_id, "alice")
    spec = SweepSpec(total_messages=4, agents={"Guard": 1, "Prisoner": 1}, llms=["mock:a"])
    sweep, planned = sweep_service.create(store, view, spec, "alice")
    for cid in (mine, bobs):
        store.scores.add("len", "conversation", cid, {"n": 1}, conversation_id=cid)
    assert cli("experiment", "update", exp_id, "--favourite", user="bob").code == 0
    assert cli("conversation", "favourite", mine).code == 0
    doomed = [d["_id"] for d in store.db.conversations.find({"experiment_id": exp_id})]
    counts = _hanging(store, doomed)
    assert len(doomed) == 2 + planned and counts["summaries"] == 4 and counts["scores"] == 2
    kept_before = _hanging(store, [kept_conversation])

    refused = cli("experiment", "delete", exp_id, "--yes", user="bob")
    assert refused.code == 2 and "only its owner may delete" in refused.err
    unconfirmed = cli("experiment", "delete", exp_id)  # no terminal, no --yes
    assert unconfirmed.code == 2 and "--yes" in unconfirmed.err
    question = (
        f"Delete {exp_id} (Prison experiment) with {len(doomed)} conversations (1 of them other "
        f"users'), {counts['messages']} messages, {counts['calls']} calls, 4 summaries, 2 scores "
        "and 1 sweep?"
    )
    assert question in " ".join(unconfirmed.err.split())
    assert _hanging(store, doomed) == counts  # nothing deleted yet

    deleted = cli("experiment", "delete", exp_id, "--yes")
    assert deleted.code == 0, deleted.err
    assert deleted.out.startswith(f"Deleted {exp_id} with {len(doomed)} conversations")
    assert _hanging(store, doomed) == dict.fromkeys(PER_CONVERSATION, 0)
    assert store.db.conversations.count_documents({"experiment_id": exp_id}) == 0
    assert store.db.sweeps.count_documents({"_id": sweep["_id"]}) == 0
    assert store.db.experiments.count_documents({"_id": exp_id}) == 0
    assert store.db.favourites.count_documents({"target": {"$in": [exp_id, mine]}}) == 0
    assert _hanging(store, [kept_conversation]) == kept_before
    assert cli("experiment", "show", kept_id).code == 0
    _prompts_match_calls(store)
    assert reference_hashes(store.db) == foreign


def test_conversation_delete_takes_what_hangs_on_it(shared, prison_path):
    cli, store = shared
    foreign = reference_hashes(store.db)
    exp_id = cli("experiment", "create", str(prison_path), "--json").json()["id"]
    first, second = _run(cli, exp_id), _run(cli, exp_id)  # same seed: they share prompts
    store.scores.add("len", "conversation", first, {"n": 1}, conversation_id=first)
    counts = _hanging(store, [first])
    assert counts["summaries"] == 2 and counts["scores"] == 1
    prompts_before = store.db.prompts.count_documents({})
    second_before = _hanging(store, [second])

    assert cli("conversation", "delete", first, "--yes", user="bob").code == 2
    unconfirmed = cli("conversation", "delete", first)
    assert unconfirmed.code == 2
    question = (
        f"Delete {first} with its 4 messages, {counts['calls']} calls, 2 summaries and 1 score?"
    )
    assert question in " ".join(unconfirmed.err.split())
    deleted = cli("conversation", "delete", first, "--yes")
    assert deleted.code == 0, deleted.err
    assert deleted.out.strip() == question.replace("Delete", "Deleted").replace("?", ".")
    assert _hanging(store, [first]) == dict.fromkeys(PER_CONVERSATION, 0)
    assert _hanging(store, [second]) == second_before
    assert store.db.prompts.count_documents({}) == prompts_before  # all shared with `second`
    _prompts_match_calls(store)

    assert cli("conversation", "delete", second, "--yes").code == 0
    assert store.db.prompts.count_documents({}) == 0 and store.db.calls.count_documents({}) == 0
    assert reference_hashes(store.db) == foreign


@pytest.mark.pty
def test_the_confirmations_count_at_a_terminal(tmp_path, run_cli, prison_path):
    """`experiment delete` without --yes asks at a terminal; the menu's Delete asks the same."""
    db = str(tmp_path / "store")
    env = {"SIM_DB": db, "SIM_USER": "alice"}
    exp_id = run_cli(["experiment", "create", str(prison_path), "--json"], env=env).json()["id"]
    run = ["run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "4", "--llm", "mock:a"]
    assert run_cli(run, env=env).code == 0
    store = open_store(open_database(db, "llm_simulator"))
    calls, summaries = store.db.calls.count_documents({}), store.db.summaries.count_documents({})
    store.close()
    assert summaries == 1  # the day's summary
    question = (
        f"Delete {exp_id} (Prison experiment) with 1 conversation, 4 messages, {calls} calls and "
        "1 summary?"
    )
    terminal = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SIM_", "MONGODB"))},
        **env,
        "PYTHONPATH": str(REPO),
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
    }

    def spawn(*args: str) -> pexpect.spawn:
        return pexpect.spawn(
            sys.executable,
            [str(REPO / "main.py"), *args],
            env=terminal,
            cwd=str(tmp_path),
            dimensions=(50, 220),
            encoding="utf-8",
            timeout=120,
        )

    child = spawn("experiment", "delete", exp_id)
    child.expect_exact(question)
    child.sendline("n")
    child.expect_exact("Nothing deleted.")
    child.expect(pexpect.EOF)

    menu = spawn()
    menu.expect_exact("What do you want to do?")
    menu.send("Select\r")
    menu.expect_exact("Which experiment?")
    menu.send("Prison\r")
    menu.expect_exact(f"Experiment {exp_id}: Prison experiment")
    menu.send("delete\r")
    menu.expect_exact(question)
    menu.send("y")
    menu.expect_exact(
        f"Deleted {exp_id} with 1 conversation, 4 messages, {calls} calls and 1 summary."
    )
    menu.expect_exact("What do you want to do?")
    menu.send("Exit\r")
    menu.expect(pexpect.EOF)
    listed = run_cli(["conversation", "list", "--json"], env=env)
    assert listed.json() == []
