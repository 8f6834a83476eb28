"""Commands load when they run: `llm-sim run` does not import the analysis, the report or the
reference importer, and `--help` still lists every command, from summaries that say what each
command's own help says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from simulator.cli.lazy_group import LazyGroup
from simulator.cli.main import COMMANDS, cli

REPO = Path(__file__).resolve().parents[2]

HEAVY = ("simulator.analysis", "simulator.cli.commands.report", "simulator.reference_import")


def test_starting_the_cli_imports_no_command_module():
    probe = (
        "import sys, simulator.cli.main\n"
        "print(sorted(m for m in sys.modules if m.startswith(('simulator.cli.commands', "
        "'simulator.analysis', 'simulator.reference_import'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == "[]"


def test_help_lists_every_command_and_each_one_loads_under_its_name(run_cli):
    result = run_cli(["--help"])
    assert result.code == 0
    listed = result.out.split("Commands:")[1]
    for name in COMMANDS:
        assert f"\n  {name} " in listed
    context = click.Context(cli)
    for name in COMMANDS:
        assert cli.get_command(context, name).name == name
    assert cli.get_command(context, "no-such-command") is None


@pytest.mark.parametrize("limit", [20, 45, 70, 300])
def test_each_summary_lists_as_the_loaded_commands_own_help(limit):
    context = click.Context(cli)
    unloaded = LazyGroup(name="llm-sim", lazy_commands=COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert unloaded.listed_help(context, name, limit) == command.get_short_help_str(limit)


@pytest.mark.parametrize("group_name", ["sweep", "conversation"])
def test_a_groups_commands_load_on_use_and_list_as_their_own_help(group_name):
    """`sweep` and `conversation` load a command's module when it runs (status and list need
    neither the runner nor the run engine); their listings read the same summaries."""
    group = cli.get_command(click.Context(cli), group_name)
    context = click.Context(group)
    unloaded = LazyGroup(name=group_name, lazy_commands=group._lazy)
    assert group._lazy
    for name in group._lazy:
        command = group.get_command(context, name)
        assert command.name == name
        for limit in (20, 45, 70, 300):
            assert unloaded.listed_help(context, name, limit) == command.get_short_help_str(limit)


def test_help_of_a_fresh_process_is_the_help_with_every_command_loaded(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIM_", "PYTHON"))}
    env.update(COLUMNS="80", PYTHONPATH=str(REPO), SIM_LOG_DIR=str(tmp_path / "logs"))
    fresh = subprocess.run(
        [sys.executable, "-c", "from simulator.cli.main import main; main(['--help'])"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert fresh.returncode == 0, fresh.stderr
    context = cli.make_context("llm-sim", [], terminal_width=78)  # as COLUMNS=80 lays it out
    for name in COMMANDS:
        cli.get_command(context, name)  # loaded: the listing reads each command's own help
    assert fresh.stdout == context.get_help() + "\n"
    assert "Commands:" in fresh.stdout
