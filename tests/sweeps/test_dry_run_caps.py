"""`sweep create --dry-run FILE` shows the `caps:` of the sweep file beside the plan and the
estimate (as text and in --json), so a researcher sees where the sweep will stop before
creating it; a file without caps shows none."""

from __future__ import annotations

import yaml


def _setup(run_cli, tmp_path, prison_path, caps: dict | None):
    db = str(tmp_path / "store")
    env = {"SIM_USER": "alice", "SIM_DB": db}
    made = run_cli(["experiment", "create", str(prison_path), "--json"], env=env)
    assert made.code == 0, made.err
    spec = {"total_messages": 4, "days": 1, "agents": {"Guard": 1, "Prisoner": 1}, "seed": 1}
    if caps is not None:
        spec["caps"] = caps
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(spec))
    return env, made.json()["id"], str(path)


def test_a_dry_run_prints_the_sweep_files_caps(run_cli, tmp_path, prison_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    caps = {"max_cost": 2.5, "max_tokens": 2000000, "max_calls": 300}
    env, exp_id, path = _setup(run_cli, tmp_path, prison_path, caps)
    printed = run_cli(["sweep", "create", exp_id, path, "--dry-run"], env=env)
    assert printed.code == 0, printed.err
    [line] = [x for x in printed.out.splitlines() if x.startswith("Caps from the sweep file")]
    assert "max_cost $2.50" in line and "max_tokens 2,000,000" in line
    assert "max_calls 300" in line
    as_json = run_cli(["sweep", "create", exp_id, path, "--dry-run", "--json"], env=env)
    assert as_json.code == 0, as_json.err
    assert as_json.json()["caps"] == caps
    listed = run_cli(["sweep", "list", "--json"], env=env)
    assert listed.json() == []  # a dry run writes nothing


def test_a_dry_run_without_caps_says_none(run_cli, tmp_path, prison_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env, exp_id, path = _setup(run_cli, tmp_path, prison_path, None)
    printed = run_cli(["sweep", "create", exp_id, path, "--dry-run"], env=env)
    assert printed.code == 0, printed.err
    assert "Caps from the sweep file" not in printed.out
    as_json = run_cli(["sweep", "create", exp_id, path, "--dry-run", "--json"], env=env)
    assert as_json.json()["caps"] is None
