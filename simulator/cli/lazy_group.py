"""A click group whose commands are imported when they are run (or listed), not at start-up."""

from __future__ import annotations

import importlib

import click


class LazyGroup(click.Group):
    """Commands named in `lazy_commands` ({name: (module, attribute)}) load on first use:
    every `llm-sim` process imported every command's module (analysis, reports, the reference
    importer: a third of a second) to run one of them."""

    def __init__(self, *args, lazy_commands: dict[str, tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = dict(lazy_commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self._lazy, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._lazy and cmd_name not in self.commands:
            module, attribute = self._lazy[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command) or command.name != cmd_name:
                raise RuntimeError(f"{module}.{attribute} is not the `{cmd_name}` command")
            self.add_command(command)
        return super().get_command(ctx, cmd_name)
