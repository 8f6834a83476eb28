"""What `llm-sim run` and `sweep create` print, through the real CLI on the mock model: the
header's defaults and seed, every run's id, message numbers as `conversation show` prints them,
counts in the right number, and a sweep's plan once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MOCK = ("--llm", "mock:x")


@pytest.fixture
def shipped(sim, tmp_path):
    """A store with the shipped prison, grid and network experiments: (db, name -> id)."""
    db = str(tmp_path / "store")
    ids = {}
    for name in ("prison", "takata_grid", "llm_sam_network"):
        path = REPO / "prompts" / "experiments" / f"{name}.yaml"
        ids[name] = sim("experiment", "create", str(path), "--json", db=db).json()["id"]
    return db, ids


def run(sim, db, *args):
    result = sim("run", *args, db=db)
    assert result.code == 0, result.err
    return result


def only_id(sim, db) -> str:
    [doc] = sim("conversation", "list", "--json", db=db).json()
    return doc["_id"]


def test_a_role_left_out_of_agents_is_a_default_line(sim, shipped):
    db, ids = shipped
    chat = ("--messages", "2", *MOCK)
    left_out = run(sim, db, ids["prison"], "--agents", "guard=2", *chat)
    assert "default: agents: Prisoner=1 (not in --agents" in left_out.err
    named = run(sim, db, ids["prison"], "--agents", "guard=2,prisoner=1", *chat)
    assert "default: agents:" not in named.err


def test_the_header_shows_the_seed_the_run_uses(sim, shipped):
    db, ids = shipped
    chat = (ids["prison"], "--agents", "guard=1,prisoner=1", "--messages", "2", *MOCK)
    seeded = run(sim, db, *chat, "--seed", "5")
    assert "seed: 5 (" in seeded.err
    assert "seed=7" not in seeded.err  # the experiment's LLM entry's own seed is replaced
    unseeded = run(sim, db, *chat)
    # without a run seed the entry's own seed 7 is what every call uses, and the header says so
    assert "seed=7" in unseeded.err and "uses its LLM's own seed: 7" in unseeded.err


def test_grid_and_network_headers_show_the_given_seed(sim, shipped):
    db, ids = shipped
    grid = run(sim, db, ids["takata_grid"], "--agents", "1", "--steps", "1", *MOCK, "--seed", "9")
    assert "seed: 9 (" in grid.err
    network = run(sim, db, ids["llm_sam_network"], "--rounds", "1", *MOCK, "--seed", "9")
    assert "seed: 9 (" in network.err


@pytest.mark.parametrize(
    "world,flags",
    [
        ("prison", ("--agents", "guard=1,prisoner=1", "--messages", "2")),
        ("takata_grid", ("--agents", "1", "--steps", "1")),
        ("llm_sam_network", ("--rounds", "1")),
    ],
)
def test_every_world_prints_its_run_id_first_and_last(sim, shipped, world, flags):
    db, ids = shipped
    result = run(sim, db, ids[world], *flags, *MOCK)
    run_id = only_id(sim, db)
    lines = result.out.splitlines()
    assert lines[0].startswith(f"{run_id}: ")
    assert lines[-1] == f"{run_id} done"


def test_run_numbers_messages_as_show_prints_them_and_fork_takes_them(sim, shipped):
    db, ids = shipped
    result = run(sim, db, ids["prison"], "--agents", "guard=1,prisoner=1", "--messages", "3", *MOCK)
    places = re.findall(r"^\[(\d+:\d+)\] (\S+):", result.out, re.M)
    conv_id = only_id(sim, db)
    shown = sim("conversation", "show", conv_id, db=db, env={"COLUMNS": "200"}).out
    assert places == re.findall(r"^\[(\d+:\d+)\] (\S+):", shown, re.M)
    assert [p for p, _ in places] == ["1:0", "1:1", "1:2"]
    fork = sim("conversation", "fork", conv_id, "--at", places[1][0], *MOCK, db=db)
    assert fork.code == 0, fork.err
    assert re.findall(r"^\[(\d+:\d+)\] (\S+):", fork.out, re.M)[0] == places[1]


@pytest.mark.parametrize("n", [1, 2])
def test_counts_agree_with_their_nouns(sim, shipped, n):
    db, ids = shipped
    s = "" if n == 1 else "s"
    grid = run(sim, db, ids["takata_grid"], "--agents", str(n), "--steps", str(n), *MOCK)
    assert f"grid: {n} agent{s} on 50 x 50 torus, message radius 5, {n} step{s} (" in grid.err
    assert f": {n} agent{s} on 50 x 50 torus, radius 5, {n} step{s}" in grid.out
    network = run(sim, db, ids["llm_sam_network"], "--rounds", str(n), *MOCK)
    assert f"round 0 from the table then {n} round{s} (" in network.err
    assert f"{n} round{s} after round 0" in network.out
    chat = ("--agents", f"guard={n},prisoner={n}", "--messages", str(2 * n), "--days", str(n))
    chat_run = run(sim, db, ids["prison"], *chat, *MOCK)
    assert f"{2 * n} messages over {n} day{s}: " in chat_run.err
    listed = sim("conversation", "list", db=db, env={"COLUMNS": "200"}).out
    assert f"{n} Guard{s}, {n} Prisoner{s}" in listed
    plan = sim("sweep", "create", ids["takata_grid"], *MOCK, "--agents", str(n), "--dry-run", db=db)
    assert plan.code == 0, plan.err
    assert "in all 1 cell, 1 conversation" in " ".join(plan.out.split())
    reps = ("--repetitions", str(n), "--dry-run")
    chat_plan = sim(
        "sweep",
        "create",
        ids["prison"],
        "--messages",
        "3",
        "--agents",
        "guard=1",
        *MOCK,
        *reps,
        db=db,
    )
    assert f"= 1 cell x {n} repetition{s} = {n} conversation{s}" in " ".join(chat_plan.out.split())


def test_sweep_create_prints_its_plan_once(sim, shipped):
    db, ids = shipped
    flags = ("--messages", "3", "--agents", "guard=1,prisoner=1", *MOCK, "--llm", "mock:y")
    result = sim("sweep", "create", ids["prison"], *flags, "--repetitions", "2", "--yes", db=db)
    assert result.code == 0, result.err
    out = " ".join(result.out.split())
    assert out.count("4 conversations") == 1
    assert "cells:" not in out
    assert "plan: 2 LLMs = 2 cells x 2 repetitions = 4 conversations" in out
    assert "4 new conversations stored" in out
    result = sim("sweep", "create", ids["prison"], *flags, "--repetitions", "502", "--yes", db=db)
    assert "1,000 new conversations stored" in " ".join(result.out.split())  # beside the 4


def test_a_sweep_plan_names_the_seed_its_conversations_use(sim, shipped):
    db, ids = shipped
    flags = ("--messages", "2", "--agents", "guard=1,prisoner=1", *MOCK, "--dry-run")
    seeded = sim("sweep", "create", ids["prison"], *flags, "--seed", "5", db=db)
    assert seeded.code == 0, seeded.err
    said = " ".join((seeded.out + seeded.err).split())
    assert "is not listed in the experiment" in said
    assert "seed=7" not in said  # the sweep's seed replaces the default LLM entry's own
    unseeded = sim("sweep", "create", ids["prison"], *flags, db=db)
    assert unseeded.code == 0, unseeded.err
    said = " ".join((unseeded.out + unseeded.err).split())
    assert "every model call uses its LLM's own seed: 7" in said
    assert "sampling are not reproducible" not in said
