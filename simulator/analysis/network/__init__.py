"""Analysis of opinion-network runs (LLM-SAM; shared/specs/llm-sam-network.md).

`measures`: per-round figures (mean opinion, share Yes, polarization, unpopular norms,
paradigm shifts, consistency, assortativity) and the distance between two trajectories, the
same for an LLM run and the theory's.
"""

from __future__ import annotations

from simulator.analysis.network.measures import (
    ROUND_MEASURES,
    assortativity,
    bimodality,
    round_measures,
    run_measures,
    trajectory_distance,
)

__all__ = [
    "ROUND_MEASURES",
    "assortativity",
    "bimodality",
    "round_measures",
    "run_measures",
    "trajectory_distance",
]
