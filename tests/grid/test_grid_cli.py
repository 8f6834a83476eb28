"""The grid through the real CLI: import the shipped experiment, run it live, refuse chat flags
instead of dropping them, sweep it, list and show its runs."""

from __future__ import annotations

import pytest
from grid_helpers import GRID_YAML, scripted
from rich.console import Console

from simulator.testing import StubLLMServer
from simulator.worlds.grid.cli.live import GridLiveView, field_lines
from simulator.worlds.grid.engine import events as ev


@pytest.fixture
def env(tmp_path):
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = scripted("x-1")
        yield {
            "SIM_DB": str(tmp_path / "store"),
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": server.openai_base_url,
        }


def _experiment(run_cli, env) -> str:
    made = run_cli(["experiment", "import", str(GRID_YAML), "--json"], env=env)
    assert made.code == 0, made.err
    return made.json()["id"]


def test_run_shows_each_step_and_stores_it(run_cli, env):
    exp = _experiment(run_cli, env)
    shown = run_cli(["experiment", "show", exp], env=env)
    assert "kind grid: 10 agents on 50 x 50 torus, message radius 5, 100 steps" in shown.out
    args = ["run", exp, "--llm", "openai:stub", "--agents", "3", "--steps", "2", "--seed", "4"]
    result = run_cli(args, env=env)
    assert result.code == 0, result.err
    assert "grid: 3 agents on 50 x 50 torus, message radius 5, 2 steps (18 calls" in result.err
    assert "default: positions: random cells from the seed" in result.err
    assert result.out.count("--- step ") == 2
    assert "agent2 (" in result.out and "x-1: hello from agent2 #together" in result.out
    run_id = result.out.split(":", 1)[0].strip()
    listed = run_cli(["conversation", "list", "--json"], env=env)
    assert [c["_id"] for c in listed.json()] == [run_id]
    show = run_cli(["conversation", "show", run_id, "--json"], env=env)
    steps = show.json()["steps"]
    assert len(steps) == 6 and {s["move"] for s in steps} == {"x-1"}


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        (["--messages", "20"], "--messages"),
        (["--speaker", "random"], "--speaker"),
        (["--days", "2"], "--days"),
        (["--agents", "guard=2"], "--agents"),
    ],
)
def test_chat_flags_on_a_grid_are_refused_not_dropped(run_cli, env, extra, field):
    exp = _experiment(run_cli, env)
    result = run_cli(["run", exp, "--llm", "openai:stub", *extra], env=env)
    assert result.code == 2
    assert field in result.err
    assert run_cli(["conversation", "list", "--json"], env=env).json() == []  # nothing written


def test_grid_flags_on_a_chat_are_refused(run_cli, env, prison_path):
    made = run_cli(["experiment", "import", str(prison_path), "--json"], env=env)
    exp = made.json()["id"]
    args = ["run", exp, "--agents", "guard=1,prisoner=1", "--messages", "4", "--radius", "3"]
    result = run_cli(args, env=env)
    assert result.code == 2 and "--radius belong to grid experiments" in result.err
    missing = run_cli(["run", exp, "--agents", "guard=1,prisoner=1"], env=env)
    assert missing.code == 2 and "needs --messages" in missing.err


def test_sweep_plan_create_run_status(run_cli, env):
    exp = _experiment(run_cli, env)
    base = ["sweep", "create", exp, "--llm", "openai:stub", "--agents", "3", "--steps", "2"]
    plan = run_cli([*base, "--radius", "0,5,25", "--seeds", "1,2", "--dry-run", "--json"], env=env)
    assert plan.code == 0, plan.err
    assert plan.json()["conversations"] == 6 and plan.json()["expected_calls"] == 6 * 18
    refused = run_cli([*base, "--days", "2", "--yes"], env=env)
    assert refused.code == 2 and "--days belong to group chats" in refused.err
    made = run_cli([*base, "--radius", "0,25", "--seeds", "7", "--yes", "--json"], env=env)
    sweep_id = made.json()["sweep_id"]
    again = run_cli([*base, "--radius", "0,25", "--seeds", "7", "--yes", "--json"], env=env)
    assert again.json()["sweep_id"] == sweep_id and again.json()["added"] == 0
    ran = run_cli(["sweep", "run", sweep_id, "--json"], env=env)
    assert ran.code == 0, ran.err
    status = ran.json()
    assert status["complete"] and status["total"] == 2 and status["calls"] == 36


def test_the_live_field_marks_every_agent():
    lines = field_lines([(0, 0), (3, 1), (3, 0), (9, 5)], 10, 6)
    assert len(lines) == 3 and all(len(line) == 10 for line in lines)
    assert lines[-1] == "0..+......"  # (3, 0) and (3, 1) share a character row
    assert lines[0][9] == "3"
    console = Console(record=True, width=120, force_terminal=True)
    view = GridLiveView(console, "rich")
    world = {"width": 10, "height": 6, "torus": True, "agents": 2, "steps": 1, "radius": 1}
    view(ev.GridPlanned("conv_x", ["agent0", "agent1"], world, 0, [(0, 0), (5, 5)]))
    rows = [
        {
            "agent": f"agent{i}",
            "agent_index": i,
            "position_after": [i + 1, 0],
            "move": "x+1",
            "move_fallback": i == 1,
            "heard_from": [],
            "message": f"hi {i}",
        }
        for i in range(2)
    ]
    view(ev.GridStepStored("conv_x", 1, rows))
    text = console.export_text()
    assert "Step 1" in text and ".01......." in text
    assert "agent1 (2,0) fallback (no move named, did not move)" in text
