"""Moves: the histogram per agent and overall, when "stay" happens, and how often parsing failed.

The paper reads its headline from these counts (x+1 and y+1 most common, stay rare until
agents cluster, every agent staying at step 1), so they are kept as raw counts: shares and
means across runs are taken by the caller, which knows how many runs and steps it pooled.
"""

from __future__ import annotations

from collections import Counter

from simulator.analysis.grid.runs import GridRun
from simulator.domain.grid import FALLBACK_MOVE, MOVES


def empty_histogram() -> dict[str, int]:
    """Every move with a zero count, in the canonical order (a missing move reads as 0)."""
    return dict.fromkeys(MOVES, 0)


def histogram(moves: list[str]) -> dict[str, int]:
    counts = Counter(moves)
    found = empty_histogram()
    for move, n in counts.items():
        found[move if move in found else FALLBACK_MOVE] += n  # an unknown value counts as stay
    return found


def move_measures(run: GridRun) -> dict:
    """Counts for one run.

    `per_agent`: agent name -> move -> count; `overall`: move -> count; `stay_per_step`: how
    many agents said stay at each stored step (index 0 is step 1); `fallbacks`: moves the
    parser could not read (stored as stay, counted here so they are never silent), also per
    agent and per step."""
    per_agent: dict[str, list[str]] = {name: [] for name in run.names}
    stay_per_step: list[int] = []
    fallback_per_step: list[int] = []
    fallbacks: Counter[str] = Counter()
    for step in range(1, run.last_step + 1):
        stays = fell = 0
        for row in run.by_step.get(step) or []:
            if row is None:
                continue
            move = str(row.get("move") or FALLBACK_MOVE)
            per_agent[str(row["agent"])].append(move)
            stays += move == "stay"
            if row.get("move_fallback"):
                fell += 1
                fallbacks[str(row["agent"])] += 1
        stay_per_step.append(stays)
        fallback_per_step.append(fell)
    every = [move for moves in per_agent.values() for move in moves]
    total = len(every)
    overall = histogram(every)
    return {
        "overall": overall,
        "per_agent": {name: histogram(moves) for name, moves in per_agent.items()},
        "moves": total,
        "shares": {m: (n / total if total else None) for m, n in overall.items()},
        "stay_per_step": stay_per_step,
        "fallbacks": sum(fallbacks.values()),
        "fallbacks_per_agent": {name: fallbacks.get(name, 0) for name in run.names},
        "fallback_per_step": fallback_per_step,
    }


def pooled_histogram(histograms: list[dict[str, int]]) -> dict[str, int]:
    """The counts of several runs (or agents) added up."""
    total = empty_histogram()
    for counts in histograms:
        for move, n in counts.items():
            total[move] = total.get(move, 0) + n
    return total
