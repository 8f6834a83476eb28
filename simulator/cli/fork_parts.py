"""What a world shows of its forks and replays: the run header before a fork runs, its live
view while it runs, and (a world forked at a message) the menu's questions of what changes.

Each world's `cli/forking.py` is a module with these names (the registry's
`part(kind, "cli.forking")`); cli/fork_view.py and cli/interactive/fork_menu.py read them
through the accessors below instead of naming a world. The names marked optional may be left
out, and so may the module where the defaults serve the world (the chat's live lines, nothing
else listening).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Protocol, cast

from pydantic import BaseModel
from rich.console import Console

from simulator.cli.context import AppContext
from simulator.cli.live import LiveView
from simulator.engine import events as ev
from simulator.worlds import has_part, part


class ForkView(Protocol):
    """What a fork shows besides `llm-sim run`'s header (the world's cli/run.py prints that)."""

    # optional: the run's live view (default: the message lines of cli/live.py)
    def live_view(self, console: Console, as_json: bool) -> LiveView: ...

    # optional: what else hears the run's events (a network's line per round), or None
    def listener(self, app: AppContext, as_json: bool) -> Callable[[ev.Event], None] | None: ...

    # a world forked at a message: the menu's questions of what changes from the fork point,
    # as `forks.plan`'s keywords (llm, speaker, variants); None values keep the parent's
    def ask_changes(self, app: AppContext, doc: dict, spec: BaseModel) -> dict: ...


def fork_view(kind: str) -> ForkView:
    """The world `kind`'s fork and replay display part (imported on first use); a world that
    ships none gets the defaults."""
    if not has_part(kind, "cli.forking"):
        return cast(ForkView, SimpleNamespace())
    return cast(ForkView, part(kind, "cli.forking"))


def live_view(kind: str, console: Console, as_json: bool) -> LiveView:
    world = fork_view(kind)
    if hasattr(world, "live_view"):
        return world.live_view(console, as_json)
    return LiveView.for_output(console, as_json)


def listener(kind: str, app: AppContext, as_json: bool) -> Callable[[ev.Event], None] | None:
    world = fork_view(kind)
    return world.listener(app, as_json) if hasattr(world, "listener") else None
