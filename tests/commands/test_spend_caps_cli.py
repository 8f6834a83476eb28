"""Spend and caps through the real entry point: a single run stopped by a cap (exit status 3,
resumable), a cost cap refused for a model of unknown price, a sweep file's caps, and spend in
exports, measures and the report."""

from __future__ import annotations

import json

import pytest
import yaml

from simulator.domain.budget import CAP_REACHED_EXIT
from simulator.testing import StubLLMServer

PRICE = {"input": 1000.0, "output": 2000.0}


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub"]) as server:
        yield server


def _experiment(sim, tmp_path, prison_path, price: dict | None) -> tuple[str, str]:
    data = yaml.safe_load(prison_path.read_text())
    data["llms"] = [*data["llms"], {"model": "openai:stub", **({"price": price} if price else {})}]
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data))
    db = str(tmp_path / "store")
    return db, sim("experiment", "create", str(path), "--json", db=db).json()["id"]


RUN = ("--agents", "guard=1,prisoner=1", "--messages", "6", "--days", "1", "--llm", "openai:stub")


def test_a_run_stops_at_its_call_cap_resumable_with_exit_status_3(sim, stub, tmp_path, prison_path):
    db, exp_id = _experiment(sim, tmp_path, prison_path, PRICE)
    env = {"OPENAI_BASE_URL": stub.openai_base_url}
    capped = sim("run", exp_id, *RUN, "--max-calls", "3", db=db, env=env)
    assert capped.code == CAP_REACHED_EXIT, capped.err
    assert "call cap (--max-calls 3) was reached" in capped.err
    assert "3 calls" in capped.err and "$" in capped.err
    [conv] = sim("conversation", "list", "--json", db=db).json()
    assert conv["status"] == "interrupted"
    shown = sim("conversation", "show", conv["_id"], "--json", "--prompts", db=db).json()
    assert len(shown["calls"]) == 3 and len(shown["messages"]) == 3  # stopped before call 4

    resumed = sim("conversation", "resume", conv["_id"], db=db, env=env)
    assert resumed.code == 0, resumed.err
    out = tmp_path / "export"
    exported = sim("export", conv["_id"], "--output", str(out), db=db)
    assert exported.code == 0, exported.err
    [row] = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    calls = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    assert all(c["cost"] > 0 for c in calls)  # priced by the experiment's own `price:`
    assert row["cost"] == pytest.approx(sum(c["cost"] for c in calls))
    assert row["cost_unknown_calls"] == 0 and row["call_seconds"] > 0
    measured = sim("measures", conv["_id"], "--json", db=db)
    assert measured.code == 0, measured.err
    assert "cost" in json.dumps(measured.json())
    said = sim("measures", conv["_id"], db=db)
    assert said.code == 0 and "Spend: " in said.out and "$" in said.out, said.err


def test_a_cost_cap_is_refused_when_the_price_is_unknown(sim, stub, tmp_path, prison_path):
    db, exp_id = _experiment(sim, tmp_path, prison_path, None)
    env = {"OPENAI_BASE_URL": stub.openai_base_url}
    refused = sim("run", exp_id, *RUN, "--max-cost", "1", db=db, env=env)
    assert refused.code == 2, refused.err
    assert "openai:stub" in refused.err and "price" in refused.err
    assert sim("conversation", "list", "--json", db=db).json() == []  # nothing stored

    done = sim("run", exp_id, *RUN, "--json", db=db, env=env)  # no cap: runs, price unknown
    assert done.code == 0, done.err
    [conv] = sim("conversation", "list", "--json", db=db).json()
    out = tmp_path / "export"
    assert sim("export", conv["_id"], "--output", str(out), db=db).code == 0
    [row] = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    assert row["cost"] is None and row["cost_unknown_calls"] == row["n_calls"] > 0


def test_a_sweep_files_caps_are_kept_and_the_command_overrides_them(
    sim, stub, tmp_path, prison_path
):
    db, exp_id = _experiment(sim, tmp_path, prison_path, PRICE)
    env = {"OPENAI_BASE_URL": stub.openai_base_url}
    sweep_file = tmp_path / "sweep.yaml"
    spec = {"total_messages": 4, "days": 1, "agents": {"Guard": 1, "Prisoner": 1},
            "llms": ["openai:stub"], "repetitions": 3, "seed": 1}  # fmt: skip
    sweep_file.write_text(yaml.safe_dump({**spec, "caps": {"max_cost": "none"}}))
    bad = sim("sweep", "create", exp_id, str(sweep_file), "--yes", db=db)
    assert bad.code == 2 and "caps" in bad.err and "max_cost" in bad.err, bad.err

    sweep_file.write_text(yaml.safe_dump({**spec, "caps": {"max_calls": 3}}))
    created = sim("sweep", "create", exp_id, str(sweep_file), "--yes", "--json", db=db)
    assert created.code == 0, created.err
    sweep_id = created.json()["sweep_id"]
    capped = sim("sweep", "run", sweep_id, "--concurrency", "1", db=db, env=env)
    assert capped.code == CAP_REACHED_EXIT, capped.err
    assert "call cap (caps.max_calls: 3 in the sweep file)" in capped.err  # not a flag given
    status = sim("sweep", "status", sweep_id, "--json", db=db).json()
    assert status["spend"]["calls"] == 3 and status["spend"]["cost"] > 0
    assert not status["complete"]

    finished = sim("sweep", "resume", sweep_id, "--max-calls", "1000", "--json", db=db, env=env)
    assert finished.code == 0, finished.err
    assert finished.json()["complete"]
    report = tmp_path / "report.html"
    made = sim("report", sweep_id, "--output", str(report), db=db)
    assert made.code == 0, made.err
    page = report.read_text()
    assert 'id="spend"' in page and "spend-table" in page


def test_help_names_the_caps_and_their_exit_status(sim):
    for command in (("run",), ("sweep", "run"), ("sweep", "work"), ("sweep", "resume")):
        shown = sim(*command, "--help")
        assert shown.code == 0
        text = " ".join(shown.out.split())
        assert "--max-cost" in text and "--max-tokens" in text and "--max-calls" in text
        assert f"exits with status {CAP_REACHED_EXIT}" in text
