"""A sweep too large for the embedded store is announced before it is created, not discovered
an hour later; on a MongoDB server, or at a comfortable size, nothing is said."""

from __future__ import annotations

import pytest

from simulator.services.sweeps import EMBEDDED_COMFORT


def _experiment(run_cli, env, prison_path) -> str:
    made = run_cli(["experiment", "create", str(prison_path), "--json"], env=env)
    assert made.code == 0, made.err
    return run_cli(["experiment", "list", "--json"], env=env).json()[0]["id"]


def _dry_run(run_cli, env, exp_id, repetitions):
    args = ["sweep", "create", exp_id, "--llm", "mock:a", "--llm", "mock:b"]
    args += ["--repetitions", str(repetitions), "--messages", "4", "--agents", "Guard=1,Prisoner=1"]
    args += ["--dry-run"]
    return run_cli(args, env=env)


@pytest.mark.parametrize("where", ["embedded", "wire"])
def test_a_large_sweep_on_the_embedded_store_gets_a_note(
    where, tmp_path, run_cli, prison_path, request
):
    db = str(tmp_path / "store") if where == "embedded" else request.getfixturevalue("wire_server")
    env = {"SIM_DB": db, "SIM_DB_NAME": f"note_{tmp_path.name[-12:]}", "SIM_USER": "alice"}
    exp_id = _experiment(run_cli, env, prison_path)
    result = _dry_run(run_cli, env, exp_id, EMBEDDED_COMFORT // 2)
    assert result.code == 0, result.err
    err = " ".join(result.err.split())  # wrapped at the terminal's width
    said = "embedded store" in err and "mongodb://" in err
    assert said == (where == "embedded")
    assert f"{EMBEDDED_COMFORT:,} conversations" in err or where == "wire"


def test_a_comfortable_sweep_gets_no_note(tmp_path, run_cli, prison_path):
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice"}
    exp_id = _experiment(run_cli, env, prison_path)
    result = _dry_run(run_cli, env, exp_id, 10)
    assert result.code == 0, result.err
    assert "embedded store" not in result.err
