"""`sweep create`'s flags come from the worlds: listed world by world in --help, given by name
with -W KEY=VALUE as well, and a flag of another world is refused naming that world."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.cli import sweep_parts
from simulator.errors import UserError
from simulator.testing import StubLLMServer
from simulator.worlds import WorldRow, register, unregister

EXPERIMENTS = Path(__file__).resolve().parents[2] / "prompts" / "experiments"


@pytest.fixture
def env(tmp_path):
    with StubLLMServer(models=["stub"]) as server:
        yield {
            "SIM_DB": str(tmp_path / "store"),
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": server.openai_base_url,
        }


def _import(run_cli, env, name: str) -> str:
    made = run_cli(["experiment", "import", str(EXPERIMENTS / name), "--json"], env=env)
    assert made.code == 0, made.err
    return made.json()["id"]


def test_help_lists_each_worlds_flags_under_its_name(run_cli):
    shown = run_cli(["sweep", "create", "--help"])
    assert shown.code == 0, shown.err
    text = shown.out
    chat = text.index("Options for a group chat (kind: chat)")
    grid = text.index("(kind: grid)")
    network = text.index("(kind: network)")
    assert chat < text.index("--messages") < grid < text.index("--radius") < network
    assert "-W, --world KEY=VALUE" in text[:chat]


def test_world_values_are_the_flags_by_name(run_cli, env):
    exp = _import(run_cli, env, "takata_grid.yaml")
    base = ["sweep", "create", exp, "--llm", "openai:stub", "--agents", "3", "--dry-run", "--json"]
    flags = run_cli([*base, "--steps", "2", "--radius", "0,5"], env=env)
    named = run_cli([*base, "-W", "steps=2", "-W", "radius=0,5"], env=env)
    assert flags.code == 0 and named.code == 0, named.err
    assert named.json() == flags.json()
    twice = run_cli([*base, "--steps", "2", "-W", "steps=3"], env=env)
    assert twice.code == 2 and "--steps is given twice" in twice.err
    unknown = run_cli([*base, "-W", "tide=3"], env=env)
    assert unknown.code == 2 and "'tide=3' is not KEY=VALUE" in unknown.err
    chat_flag = run_cli([*base, "-W", "days=2"], env=env)
    assert chat_flag.code == 2 and "--days belong to group chats" in chat_flag.err


def test_a_flag_of_another_world_is_refused_naming_it(run_cli, env):
    exp = _import(run_cli, env, "llm_sam_network.yaml")
    refused = run_cli(["sweep", "create", exp, "--steps", "2", "--dry-run"], env=env)
    assert refused.code == 2
    assert "--steps belong to grid experiments; this is an opinion-network experiment" in (
        refused.err
    )
    forked = run_cli(["sweep", "create", exp, "--fork-from", "c_1", "--dry-run"], env=env)
    assert forked.code == 2 and "fork sweeps branch a stored chat conversation" in forked.err


def test_a_new_world_brings_its_flags_by_its_part_alone():
    register(WorldRow("toy", "toy_sweep_world", "a toy world"))
    sweep_parts.world_flags.cache_clear()
    try:
        flags = sweep_parts.world_flags()
        assert flags.owners["tides"] == ("toy",)
        assert flags.owners["seeds"] == ("grid", "network", "toy")
        with pytest.raises(UserError) as refused:
            sweep_parts.refuse_other_worlds("grid", {"tides": "1,2"})
        assert refused.value.message == (
            "--tides belong to toy experiments; this is a grid experiment"
        )
        with pytest.raises(UserError) as on_chat:
            sweep_parts.refuse_other_worlds("chat", {"tides": "1"})
        assert on_chat.value.fix == "leave them out, or sweep a toy experiment (kind: toy)"
        values = {"world_values": ("tides=3",)}
        sweep_parts.apply_world_values(values)
        assert values == {"tides": "3"}
    finally:
        unregister("toy")
        sweep_parts.world_flags.cache_clear()
