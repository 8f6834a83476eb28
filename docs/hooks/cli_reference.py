"""MkDocs hook: load every command of the `llm-sim` group before the CLI reference is built.

The group loads a command's module only when that command runs; mkdocs-click lists a group's
commands from those already loaded when there are any, so without this hook a build that had
loaded one command would document that one alone."""

from __future__ import annotations

import click


def load_all(group: click.Group, ctx: click.Context) -> None:
    """Ask the group (and each subgroup) for every command it lists, which loads it."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            load_all(command, click.Context(command, parent=ctx, info_name=name))


def on_config(config, **kwargs):
    from simulator.cli.main import cli

    load_all(cli, click.Context(cli, info_name="llm-sim"))
    return config
