"""`llm-sim run` takes its world options from the registry: each world's under its heading, a
flag of another world refused naming it, `-W NAME=VALUE` for any setting, and a world added
later gets all of it by writing its own `cli/run.py` part."""

from __future__ import annotations

import sys
import types

import click
import pytest
from click.testing import CliRunner

from simulator.cli.commands.run import run_cmd
from simulator.cli.run_parts import refuse_foreign, world_settings
from simulator.errors import UserError
from simulator.worlds import WorldRow, register, unregister


def _help() -> str:
    result = CliRunner().invoke(run_cmd, ["--help"])
    assert result.exit_code == 0, result.output
    return result.output


def test_help_lists_each_worlds_options_under_its_heading():
    text = _help()
    for heading, flag in (
        ("Group chat options:", "--messages"),
        ("2D community options:", "--steps"),
        ("Opinion network options:", "--theory"),
    ):
        assert heading in text and text.index(flag) > text.index(heading)
    assert "-W, --world NAME=VALUE" in text
    assert text.count("--agents ") == 2  # a chat's roles and a grid's number, each explained


def test_a_flag_of_other_worlds_is_refused_naming_them():
    with pytest.raises(UserError) as refused:
        refuse_foreign("network", {"agents": "3", "radius": 2, "days": 1, "theory": False})
    assert str(refused.value).startswith(
        "--agents: "
        "--agents belong to group chats and grid experiments; --radius belong to grid "
        "experiments; this is an opinion-network experiment"
    )  # --days 1 is the default: not given
    with pytest.raises(UserError, match="--rounds belong to network experiments; this is a g"):
        refuse_foreign("chat", {"rounds": 2, "agents": "guard=1"})
    refuse_foreign("grid", {"agents": "3", "steps": 2, "speaker": "round_robin"})


def test_world_settings_by_name_mean_what_the_options_mean():
    ctx = click.Context(run_cmd)
    grid = world_settings(ctx, "grid", ("steps=5", "torus=false"), {"steps": None})
    assert grid == {"steps": 5, "torus": "false"}  # an option's type; a setting as written
    network = world_settings(ctx, "network", ("agents-table=t.csv", "theory=yes"), {})
    assert network == {"agents_table": "t.csv", "theory": True}
    chat = world_settings(ctx, "chat", ("messages=20", "llm_for=guard=mock:a"), {})
    assert chat == {"total_messages": 20, "llm_for": ("guard=mock:a",)}
    with pytest.raises(UserError, match="steps is given twice"):
        world_settings(ctx, "grid", ("steps=5",), {"steps": 4})
    with pytest.raises(UserError, match="is not NAME=VALUE"):
        world_settings(ctx, "grid", ("steps",), {})
    with pytest.raises(click.BadParameter):
        world_settings(ctx, "grid", ("steps=-1",), {})


@pytest.fixture
def toy_world(monkeypatch):
    """A world that ships only its `cli/run.py` part (enough for the command's options)."""
    package = "toy_world_for_run_tests"
    run_part = types.ModuleType(f"{package}.cli.run")
    run_part.GROUP = "Toy options"
    run_part.THIS = "a toy experiment"
    run_part.THESE = "toy experiments"
    run_part.TAKES = "a toy run takes --bricks"
    run_part.OPTIONS = (click.Option(["--bricks"], type=int, help="Bricks to stack."),)
    for name, module in (
        (package, types.ModuleType(package)),
        (f"{package}.cli", types.ModuleType(f"{package}.cli")),
        (f"{package}.cli.run", run_part),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    register(WorldRow("toy", package, "a toy world"))
    yield
    unregister("toy")


def test_a_world_added_later_brings_its_options_and_its_refusals(toy_world):
    text = _help()
    assert "Toy options:" in text and "Bricks to stack." in text
    with pytest.raises(UserError, match="--bricks belong to toy experiments; this is a group"):
        refuse_foreign("chat", {"bricks": 3})
    with pytest.raises(UserError, match="--steps belong to grid experiments; this is a toy"):
        refuse_foreign("toy", {"steps": 3, "bricks": 2})
