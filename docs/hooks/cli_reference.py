"""MkDocs hook for the CLI reference (docs/cli.md, written by mkdocs-click).

* Every command of the `llm-sim` group is loaded first: the group loads a command's module only
  when that command runs, and mkdocs-click lists a group's commands from those already loaded
  when there are any, so a build that had loaded one command would document that one alone.
* An option without a default shows an empty cell: click marks "no default" with a sentinel
  that mkdocs-click would print as `Sentinel.UNSET`."""

from __future__ import annotations

import sys
from pathlib import Path

import click


def load_all(group: click.Group, ctx: click.Context) -> None:
    """Ask the group (and each subgroup) for every command it lists, which loads it."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            load_all(command, click.Context(command, parent=ctx, info_name=name))


def _without_sentinel(row_of):
    def row(option: click.Option) -> str:
        text = row_of(option)
        return text.replace("`Sentinel.UNSET`", "required" if option.required else "")

    row.__wrapped__ = row_of
    return row


def on_config(config, **kwargs):
    from mkdocs_click import _docs

    if not hasattr(_docs._format_table_option_row, "__wrapped__"):
        _docs._format_table_option_row = _without_sentinel(_docs._format_table_option_row)

    # the checkout beside mkdocs.yml, not whichever copy of the package is installed
    root = str(Path(config.config_file_path).resolve().parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    from simulator.cli.main import cli

    load_all(cli, click.Context(cli, info_name="llm-sim"))
    return config
