"""The opinion network's forks and resumes on screen (simulator/cli/fork_parts.py): a line per
stored round while a run goes on, and its outcome, both from the round printer; the house live
view (a chat's message lines) stays quiet, or the outcome would be said twice."""

from __future__ import annotations

from rich.console import Console

from simulator.cli.live import LiveView
from simulator.worlds.network.cli.run import round_printer as listener


def live_view(console: Console, as_json: bool) -> LiveView:
    return LiveView.for_output(console, True)


__all__ = ["listener", "live_view"]
