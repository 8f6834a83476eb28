"""Showing a running grid: the field with every agent on it and each agent's message, per step.

In a terminal (rich) the field is drawn after each stored step, two rows of cells per line so
a 50 x 50 torus takes 25 lines; off a terminal each step is plain lines (position, move,
message); with --json nothing.
"""

from __future__ import annotations

import string
import sys

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule

from simulator.cli.live import LiveView
from simulator.domain.plural import count
from simulator.worlds.grid.domain.rules import move_shown
from simulator.worlds.grid.engine import events as ev

MAX_DRAWN_SIDE = 120  # larger fields are listed, not drawn
MARKS = string.digits + string.ascii_letters  # agent i's mark on the field; '*' beyond 62


def mark(index: int) -> str:
    return MARKS[index] if index < len(MARKS) else "*"


def field_lines(positions: list[tuple[int, int]], width: int, height: int) -> list[str]:
    """The field as text, y growing upwards, two cells per character row: an agent's mark where
    one agent is, '+' where several share a character, '.' where none is."""
    cells: dict[tuple[int, int], list[int]] = {}
    for i, (x, y) in enumerate(positions):
        cells.setdefault((x, y // 2), []).append(i)
    lines = []
    for row in reversed(range((height + 1) // 2)):
        chars = []
        for x in range(width):
            here = cells.get((x, row), [])
            chars.append("." if not here else mark(here[0]) if len(here) == 1 else "+")
        lines.append("".join(chars))
    return lines


class GridLiveView(LiveView):
    """Engine events of a grid run to the terminal; the chat's events keep their own view."""

    def __init__(self, console: Console, mode: str):
        super().__init__(console, mode)
        self.world: dict = {}
        self.names: list[str] = []

    @classmethod
    def for_output(cls, console: Console, as_json: bool) -> GridLiveView:
        if as_json:
            return cls(console, "quiet")
        return cls(console, "rich" if sys.stdout.isatty() else "plain")

    def _on_GridPlanned(self, event: ev.GridPlanned) -> None:
        self.world, self.names = event.world, event.names
        w = event.world
        head = (
            f"{event.conversation_id}: {count(w['agents'], 'agent')} on {w['width']} x "
            f"{w['height']}{' torus' if w['torus'] else ''}, radius {w['radius']}, "
            f"{count(w['steps'], 'step')}"
            + (f" (resuming after step {event.step})" if event.step else "")
        )
        if self.mode == "plain":
            self._plain(head)
            return
        self.console.print(f"[bold]{escape(head)}[/bold]")
        self._draw(event.positions)

    def _on_GridStepStarted(self, event: ev.GridStepStarted) -> None:
        if self.mode == "rich":
            self._stop_status()
            self._status = self.console.status(
                f"step {event.step}: {count(len(self.names), 'agent')} writing, remembering "
                "and moving…"
            )
            self._status.start()

    def _on_GridStepStored(self, event: ev.GridStepStored) -> None:
        if self.mode == "plain":
            self._plain(f"--- step {event.step} ---")
            for row in event.rows:
                x, y = row["position_after"]
                self._plain(
                    f"{row['agent']} ({x},{y}) {move_shown(row)}: {_one_line(row['message'])}"
                )
            return
        self._stop_status()
        self.console.print(Rule(f"Step {event.step}"))
        self._draw([tuple(r["position_after"]) for r in event.rows])
        for row in event.rows:
            x, y = row["position_after"]
            move = escape(move_shown(row))
            move = f"[red]{move}[/]" if row["move_fallback"] else move
            heard = len(row["heard_from"])
            self.console.print(
                f"[bold cyan]{mark(row['agent_index'])} {escape(row['agent'])}[/] "
                f"({x},{y}) {move} [dim]heard {heard}[/]: "
                f"{escape(_one_line(row['message']))}"
            )

    def _draw(self, positions: list[tuple[int, int]]) -> None:
        width, height = self.world.get("width", 0), self.world.get("height", 0)
        if not width or max(width, height) > MAX_DRAWN_SIDE:
            return
        for line in field_lines(positions, width, height):
            self.console.print(line, markup=False, highlight=False)


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
