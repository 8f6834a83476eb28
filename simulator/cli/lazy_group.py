"""A click group whose commands are imported when they are run, not at start-up or for `--help`."""

from __future__ import annotations

import importlib
from gettext import gettext as _
from typing import NamedTuple

import click


class LazyCommand(NamedTuple):
    """Where a command lives, and the first paragraph of its help for the group's `--help`."""

    module: str
    attribute: str
    summary: str


class LazyGroup(click.Group):
    """Commands named in `lazy_commands` ({name: LazyCommand}) load on first use: every
    `llm-sim` process imported every command's module (analysis, reports, the reference
    importer, the store) to run one of them. The group's own `--help` lists them from their
    summaries without importing any; `llm-sim CMD --help` loads CMD and shows all of it."""

    def __init__(self, *args, lazy_commands: dict[str, LazyCommand], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = dict(lazy_commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self._lazy, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._lazy and cmd_name not in self.commands:
            module, attribute, _summary = self._lazy[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command) or command.name != cmd_name:
                raise RuntimeError(f"{module}.{attribute} is not the `{cmd_name}` command")
            self.add_command(command)
        return super().get_command(ctx, cmd_name)

    def listed_help(self, ctx: click.Context, cmd_name: str, limit: int) -> str | None:
        """The line `--help` shows for a command (None: hidden or unknown), from its summary
        while it is not loaded, the same text click makes from its help once it is."""
        if cmd_name in self._lazy and cmd_name not in self.commands:
            stand_in = click.Command(cmd_name, help=self._lazy[cmd_name].summary)
            return stand_in.get_short_help_str(limit)
        command = self.get_command(ctx, cmd_name)
        if command is None or command.hidden:
            return None
        return command.get_short_help_str(limit)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own listing (same widths and wrapping), reading summaries for the commands
        not loaded instead of importing them."""
        names = [
            name for name in self.list_commands(ctx) if self.listed_help(ctx, name, 45) is not None
        ]
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self.listed_help(ctx, name, limit) or "") for name in names]
        with formatter.section(_("Commands")):
            formatter.write_dl(rows)
