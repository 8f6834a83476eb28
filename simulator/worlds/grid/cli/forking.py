"""The 2D community's forks on screen (simulator/cli/fork_parts.py): the field drawn step by
step while a fork runs."""

from __future__ import annotations

from rich.console import Console

from simulator.worlds.grid.cli.live import GridLiveView

__all__ = ["live_view"]


def live_view(console: Console, as_json: bool) -> GridLiveView:
    return GridLiveView.for_output(console, as_json)
