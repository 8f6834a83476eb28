"""The opinion network's forks on screen (simulator/cli/fork_parts.py): a line per stored
round while a fork runs."""

from __future__ import annotations

from simulator.worlds.network.cli.run import round_printer as listener

__all__ = ["listener"]
