"""Every option of every `llm-sim` command says what it does, and so does every command that
takes arguments: `--help` is the reference a user has at hand."""

from __future__ import annotations

import click
import pytest

from simulator.cli.main import cli


def walk(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, click.Command]]:
    """Every command under `command` (lazy ones loaded), with its full name."""
    found = [(" ".join(("llm-sim", *path)), command)]
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            found += walk(sub, (*path, name))
    return found


COMMANDS = walk(cli)


def test_the_tree_is_walked_whole():
    names = {name for name, _ in COMMANDS}
    assert {"llm-sim run", "llm-sim sweep create", "llm-sim conversation fork"} <= names
    assert len(names) > 30


@pytest.mark.parametrize("name,command", COMMANDS, ids=[name for name, _ in COMMANDS])
def test_every_option_and_command_has_help(name, command):
    missing = [
        "/".join(param.opts)
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert missing == [], f"{name}: options without help: {missing}"
    takes_arguments = any(isinstance(p, click.Argument) for p in command.params)
    if takes_arguments or isinstance(command, click.Group):
        assert (command.help or "").strip(), f"{name} has no help text"


def test_sweep_create_messages_help_allows_odd_totals():
    create = dict(COMMANDS)["llm-sim sweep create"]
    params = create.get_params(click.Context(create))  # the worlds' flags with its own
    [option] = [p for p in params if "--messages" in getattr(p, "opts", ())]
    assert "even" not in option.help
