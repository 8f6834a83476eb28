"""A conversation of a mock: sweep replays identical, although the sweep's conversations ran
side by side on one backend (the mock's reply depends on its prompt alone)."""

from __future__ import annotations

from replay_helpers import PRISON


def test_a_mock_sweep_conversation_replays_identical(run_cli, tmp_path):
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice"}
    exp = run_cli(["experiment", "import", str(PRISON), "--json"], env=env).json()["id"]
    args = ["sweep", "create", exp, "--llm", "mock:m", "--repetitions", "3", "--messages", "4"]
    made = run_cli([*args, "--agents", "guard=1,prisoner=1", "--yes", "--json"], env=env)
    assert made.code == 0, made.err
    sweep_id = made.json()["sweep_id"]
    ran = run_cli(["sweep", "run", sweep_id, "--concurrency", "3"], env=env)
    assert ran.code == 0, ran.err
    conversations = run_cli(["conversation", "list", "--all", "--json"], env=env).json()
    assert len(conversations) == 3
    for conversation in conversations:
        replayed = run_cli(["conversation", "replay", conversation["_id"], "--json"], env=env)
        assert replayed.code == 0, replayed.err
        assert replayed.json()["verdict"] == "identical"
