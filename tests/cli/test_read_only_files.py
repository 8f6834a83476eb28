"""`experiment list|show` and `sweep list` on an embedded store that is ready answer from its
files (store/file_store.py) with the same output, byte for byte, as from the opened store:
favourites first, each filter and flag, another tool's documents left out with the note that
says so, and an id that is not there (or is another tool's) refused as the store refuses it.

Each command runs twice through the real `main()` in this process: once with the opened store
refused (so the files must answer), once with the files refused (so the store answers)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from bson import ObjectId
from in_process import CliResult, run_cli_in_process

from simulator.cli.context import AppContext

REPO = Path(__file__).resolve().parents[2]
PRISON = REPO / "prompts" / "experiments" / "prison.yaml"


def _store_refused(self: AppContext):
    raise AssertionError("the command opened the store: its files should have answered")


def both_ways(env: dict[str, str], monkeypatch, *args: str) -> CliResult:
    """`llm-sim ARGS` from the files, then from the store; the two outputs must be the same."""
    with monkeypatch.context() as patch:
        patch.setattr(AppContext, "store", property(_store_refused))
        files = run_cli_in_process(list(args), env=env)
    with monkeypatch.context() as patch:
        patch.setattr(AppContext, "file_reader", lambda self: None)
        opened = run_cli_in_process(list(args), env=env)
    assert (files.code, files.out, files.err) == (opened.code, opened.out, opened.err), args
    return files


def ok(env: dict[str, str], *args: str) -> CliResult:
    done = run_cli_in_process(list(args), env=env)
    assert done.code == 0, done.err
    return done


@pytest.fixture
def stored(tmp_path) -> tuple[dict[str, str], list[str], list[str]]:
    """Three experiments of two owners (alice's second one her favourite), sweeps of one, two
    and three repetitions of two of them, and an experiment of another tool: the environment,
    the experiment ids (oldest first) and the sweep ids."""
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice", "COLUMNS": "100"}
    experiments = []
    for user in ("alice", "bob", "alice"):
        made = ok({**env, "SIM_USER": user}, "experiment", "create", str(PRISON), "--json")
        experiments.append(made.json()["id"])
    ok(env, "experiment", "update", experiments[2], "--favourite", "--note", "the second one")
    sweeps = []
    for size, experiment_id in enumerate((experiments[0], experiments[1], experiments[0]), 1):
        create = ["sweep", "create", experiment_id, "--repetitions", str(size)]
        create += ["--llm", "openai:stub"]
        create += ["--messages", "4", "--agents", "Guard=1,Prisoner=1", "--yes", "--json"]
        sweeps.append(ok(env, *create).json()["sweep_id"])
    from simulator.store.database import open_database

    connection = open_database(env["SIM_DB"], "llm_simulator")
    foreign = {"_id": ObjectId(), "name": "the other tool's", "created_at": datetime(2026, 1, 1)}
    connection.db.experiments.insert_one(foreign)
    connection.close()
    return env, experiments, sweeps


@pytest.mark.parametrize(
    "flags",
    [[], ["--json"], ["--mine"], ["--favourites"], ["--mine", "--json"]],
    ids=lambda flags: " ".join(flags) or "plain",
)
def test_the_experiment_list_is_the_same_from_the_files(flags, stored, monkeypatch):
    env, experiments, _ = stored
    listed = both_ways(env, monkeypatch, "experiment", "list", *flags)
    assert listed.code == 0
    note = "1 experiment from the reference LLM Interaction Simulator were left out"
    assert note in " ".join((listed.out + listed.err).split())  # the other tool's, counted
    if flags == ["--json"]:  # the favourite first, then newest first
        ids = [row["id"] for row in listed.json()]
        assert ids == [experiments[2], experiments[1], experiments[0]]
    if flags == ["--mine", "--json"]:
        assert [row["id"] for row in listed.json()] == [experiments[2], experiments[0]]
    if flags == ["--favourites"]:
        assert experiments[2] in listed.out and experiments[0] not in listed.out


def test_bobs_list_and_an_empty_store_read_the_same(stored, monkeypatch, tmp_path):
    env, experiments, _ = stored
    listed = both_ways({**env, "SIM_USER": "bob"}, monkeypatch, "experiment", "list", "--json")
    assert [row["id"] for row in listed.json()] == experiments[::-1]  # bob has no favourite
    empty = {**env, "SIM_DB": str(tmp_path / "empty")}
    ok(empty, "experiment", "list")  # sets the store up
    assert "No experiments yet" in both_ways(empty, monkeypatch, "experiment", "list").out


@pytest.mark.parametrize(
    "flags", [[], ["--json"], ["--render", "guard=2,prisoner=1"]], ids=lambda f: " ".join(f)
)
def test_showing_an_experiment_is_the_same_from_the_files(flags, stored, monkeypatch):
    env, experiments, _ = stored
    for experiment_id in (experiments[1], experiments[2]):
        shown = both_ways(env, monkeypatch, "experiment", "show", experiment_id, *flags)
        assert shown.code == 0 and experiment_id in shown.out
    favourite = both_ways(env, monkeypatch, "experiment", "show", experiments[2], "--json")
    assert favourite.json()["favourite"] is True and favourite.json()["note"] == "the second one"


def test_an_id_the_files_do_not_hold_is_refused_by_the_store(stored, monkeypatch):
    env, _, _ = stored
    missing = run_cli_in_process(["experiment", "show", "exp_nothere"], env=env)
    assert missing.code != 0 and "no experiment with id 'exp_nothere'" in missing.err
    with monkeypatch.context() as patch:  # the files leave it to the store, which says why
        patch.setattr(AppContext, "file_reader", lambda self: None)
        assert run_cli_in_process(["experiment", "show", "exp_nothere"], env=env) == missing
    from simulator.store.database import open_database

    connection = open_database(env["SIM_DB"], "llm_simulator")
    [foreign] = connection.db.experiments.find({"schema_version": {"$exists": False}})
    connection.close()
    refused = run_cli_in_process(["experiment", "show", str(foreign["_id"])], env=env)
    assert refused.code != 0 and "written by another tool" in refused.err


@pytest.mark.parametrize("flags", [[], ["--json"], ["--experiment", "EXP"]], ids=str)
def test_the_sweep_list_is_the_same_from_the_files(flags, stored, monkeypatch):
    env, experiments, sweeps = stored
    flags = [experiments[0] if flag == "EXP" else flag for flag in flags]
    listed = both_ways(env, monkeypatch, "sweep", "list", *flags)
    assert listed.code == 0
    if "--json" in flags:
        rows = json.loads(listed.out)
        assert [row["sweep_id"] for row in rows] == sweeps[::-1]  # newest first
        assert all(row["total"] >= 1 and row["done"] == row["failed"] == 0 for row in rows)
    elif flags:
        assert sweeps[1] not in listed.out and listed.out.index(sweeps[2]) < listed.out.index(
            sweeps[0]
        )
