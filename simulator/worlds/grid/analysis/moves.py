"""Moves: the histogram per agent and overall, when "stay" happens, and how often parsing failed.

The paper reads its headline from these counts (x+1 and y+1 most common, stay rare until
agents cluster, every agent staying at step 1), so they are kept as raw counts: shares and
means across runs are taken by the caller, which knows how many runs and steps it pooled.

A reply naming no command (`move_fallback` on its row) leaves the agent where it is and is
stored with the move "stay", but it is not a stay the model chose: it goes to its own
`fallback` bucket everywhere (histograms, shares, the stay series), so a parser that reads
nothing cannot pass for agents that decided to stay.
"""

from __future__ import annotations

from collections import Counter

from simulator.worlds.grid.analysis.runs import GridRun
from simulator.worlds.grid.domain.rules import FALLBACK_MOVE, MOVES

FALLBACK = "fallback"  # the bucket of replies naming no command
BUCKETS: tuple[str, ...] = (*MOVES, FALLBACK)


def empty_histogram() -> dict[str, int]:
    """Every move and the fallback bucket with a zero count, in the canonical order."""
    return dict.fromkeys(BUCKETS, 0)


def bucket_of(row: dict) -> str:
    """The row's bucket: FALLBACK when its reply named no command, else its move (an unknown
    stored value reads as the fallback move, as the engine stores it)."""
    if row.get("move_fallback"):
        return FALLBACK
    move = str(row.get("move") or FALLBACK_MOVE)
    return move if move in MOVES else FALLBACK_MOVE


def histogram(buckets: list[str]) -> dict[str, int]:
    found = empty_histogram()
    for bucket, n in Counter(buckets).items():
        found[bucket if bucket in found else FALLBACK_MOVE] += n
    return found


def move_measures(run: GridRun) -> dict:
    """Counts for one run.

    `per_agent`: agent name -> bucket -> count; `overall`: bucket -> count; `shares`: each
    bucket over all move replies; `stay_per_step`: how many agents chose stay at each stored
    step (index 0 is step 1), fallbacks not included; `fallbacks`: replies the parser could
    not read, also per agent and per step."""
    per_agent: dict[str, list[str]] = {name: [] for name in run.names}
    stay_per_step: list[int] = []
    fallback_per_step: list[int] = []
    for step in range(1, run.last_step + 1):
        stays = fell = 0
        for row in run.by_step.get(step) or []:
            if row is None:
                continue
            bucket = bucket_of(row)
            per_agent[str(row["agent"])].append(bucket)
            stays += bucket == "stay"
            fell += bucket == FALLBACK
        stay_per_step.append(stays)
        fallback_per_step.append(fell)
    every = [bucket for buckets in per_agent.values() for bucket in buckets]
    total = len(every)
    overall = histogram(every)
    by_agent = {name: histogram(buckets) for name, buckets in per_agent.items()}
    return {
        "overall": overall,
        "per_agent": by_agent,
        "moves": total,
        "shares": {m: (n / total if total else None) for m, n in overall.items()},
        "stay_per_step": stay_per_step,
        "fallbacks": overall[FALLBACK],
        "fallbacks_per_agent": {name: counts[FALLBACK] for name, counts in by_agent.items()},
        "fallback_per_step": fallback_per_step,
    }


def pooled_histogram(histograms: list[dict[str, int]]) -> dict[str, int]:
    """The counts of several runs (or agents) added up."""
    total = empty_histogram()
    for counts in histograms:
        for move, n in counts.items():
            total[move] = total.get(move, 0) + n
    return total
