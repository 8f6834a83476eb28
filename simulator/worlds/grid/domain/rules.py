"""The 2D community's pure rules (Takata et al. 2024): torus geometry, delivery, moves.

No model, no store: every rule here is checked by unit tests against the spec's own checks
(shared/specs/takata-grid.md). Positions are (x, y) integer pairs, 0 <= x < width.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

Position = tuple[int, int]

MOVES: tuple[str, ...] = ("x+1", "x-1", "y+1", "y-1", "stay")
FALLBACK_MOVE = "stay"
NO_MESSAGES = "No Messages"  # what an agent receives when nobody is in range (the paper's text)
INITIAL_MEMORY = "no memory"
_STEPS = {"x+1": (1, 0), "x-1": (-1, 0), "y+1": (0, 1), "y-1": (0, -1), "stay": (0, 0)}
# the five commands as tokens: "x+1" but not "max+10" or "x+12"; case and inner spaces
# ("X + 1") are forgiven, since small models write them so
_MOVE_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_])([xy])\s*([+-])\s*1(?![0-9])|(?<![A-Za-z])(stay)(?![A-Za-z])",
    re.IGNORECASE,
)


def axis_distance(a: int, b: int, size: int, torus: bool) -> int:
    gap = abs(a - b)
    return min(gap, size - gap) if torus else gap


def distance(a: Position, b: Position, width: int, height: int, torus: bool = True) -> int:
    """Chebyshev distance, wrapping around on a torus: (0,0)-(49,49) is 1 on 50 x 50."""
    return max(axis_distance(a[0], b[0], width, torus), axis_distance(a[1], b[1], height, torus))


def hearers(
    positions: Sequence[Position],
    speaker: int,
    radius: int,
    width: int,
    height: int,
    torus: bool = True,
) -> list[int]:
    """The other agents within `radius` of `speaker`. Agents sharing a cell are at distance 0,
    so with radius 0 they (and only they) hear each other: our reading where the paper is silent."""
    here = positions[speaker]
    return [
        other
        for other, there in enumerate(positions)
        if other != speaker and distance(here, there, width, height, torus) <= radius
    ]


def delivery(
    positions: Sequence[Position], radius: int, width: int, height: int, torus: bool = True
) -> tuple[list[list[int]], list[list[int]]]:
    """Who hears whom this step: (recipients of each agent's message, senders each agent hears),
    both in agent order.

    The agents are indexed by cell, so each occupied cell looks only at the cells within
    `radius` of it (wrapped on a torus) instead of at every other agent: a step of 1,000 agents
    costs about as much as its hearers, not a million distances. Agents sharing a cell hear the
    same others, so a cell's window is gathered once for all of them."""
    n = len(positions)
    window = min(2 * radius + 1, width) * min(2 * radius + 1, height)
    if window >= n or not _on_field(positions, width, height):
        recipients = [hearers(positions, i, radius, width, height, torus) for i in range(n)]
    else:
        recipients = _indexed_hearers(positions, radius, width, height, torus)
    senders: list[list[int]] = [[] for _ in positions]
    for speaker, heard_by in enumerate(recipients):
        for other in heard_by:
            senders[other].append(speaker)
    return recipients, senders


def _on_field(positions: Sequence[Position], width: int, height: int) -> bool:
    return all(0 <= x < width and 0 <= y < height for x, y in positions)


def _span(centre: int, radius: int, size: int, torus: bool) -> list[int]:
    """The coordinates within `radius` of `centre` on one axis, each once."""
    if torus:
        if 2 * radius + 1 >= size:
            return list(range(size))
        return [(centre + d) % size for d in range(-radius, radius + 1)]
    return list(range(max(0, centre - radius), min(size - 1, centre + radius) + 1))


def _indexed_hearers(
    positions: Sequence[Position], radius: int, width: int, height: int, torus: bool
) -> list[list[int]]:
    """`hearers` of every agent through a cell index (positions on the field)."""
    cells: dict[Position, list[int]] = {}
    for i, cell in enumerate(positions):
        cells.setdefault((cell[0], cell[1]), []).append(i)
    recipients: list[list[int]] = [[] for _ in positions]
    for (x, y), here in cells.items():
        near: list[int] = []
        ys = _span(y, radius, height, torus)
        for xx in _span(x, radius, width, torus):
            for yy in ys:
                found = cells.get((xx, yy))
                if found:
                    near += found
        near.sort()
        for i in here:
            recipients[i] = [j for j in near if j != i]
    return recipients


def received_text(names: Sequence[str], messages: Sequence[str], senders: Sequence[int]) -> str:
    """What one agent reads: each sender's message on its own line, or "No Messages"."""
    if not senders:
        return NO_MESSAGES
    return "\n".join(f"{names[s]}: {messages[s]}" for s in senders)


def parse_move(reply: str) -> tuple[str, bool]:
    """The earliest of the five commands in the reply, and whether the parse fell back.

    "I choose y+1 then x-1" -> ("y+1", False); "north" -> ("stay", True): a reply naming no
    command is stored as an invalid move, counted, and the agent stays."""
    found = _MOVE_TOKEN.search(reply or "")
    if found is None:
        return FALLBACK_MOVE, True
    if found.group(3):
        return "stay", False
    return f"{found.group(1).lower()}{found.group(2)}1", False


def move_shown(row: dict) -> str:
    """A stored row's move as a reader should see it: a reply naming no command is shown as
    a fallback (the agent did not move), never as the stay it is stored as."""
    return "fallback (no move named, did not move)" if row.get("move_fallback") else row["move"]


def moved(position: Position, move: str, width: int, height: int, torus: bool = True) -> Position:
    """Where a move lands: wrapped on a torus, held at the edge on a bounded field."""
    dx, dy = _STEPS[move]
    x, y = position[0] + dx, position[1] + dy
    if torus:
        return x % width, y % height
    return min(max(x, 0), width - 1), min(max(y, 0), height - 1)


def initial_positions(agents: int, width: int, height: int, seed: int | None) -> list[Position]:
    """Random integer cells, reproducible for a given seed (cells may be shared, as in the paper).
    `seed` None draws from the operating system: the run stores what it drew."""
    rng = random.Random(seed)
    return [(rng.randrange(width), rng.randrange(height)) for _ in range(agents)]


def agent_names(agents: int) -> list[str]:
    """agent0, agent1, …: the paper's names (no persona)."""
    return [f"agent{i}" for i in range(agents)]
