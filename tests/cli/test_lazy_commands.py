"""Commands load when they run: `llm-sim run` does not import the analysis, the report or the
reference importer, and `--help` still lists every command."""

from __future__ import annotations

import subprocess
import sys

import click

from simulator.cli.main import COMMANDS, cli

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
