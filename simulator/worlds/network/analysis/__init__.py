"""Analysis of opinion-network runs (LLM-SAM; shared/specs/llm-sam-network.md).

`measures`: per-round figures (mean opinion, share Yes, polarization, unpopular norms,
paradigm shifts, consistency, assortativity) and the distance between two trajectories, the
same for an LLM run and the theory's. `twins`: which theory run an LLM run is compared with.
`runs`: stored runs as the analysis reads them; `summary`: the measures of a scope, per run
and per cell (`network_measures`); `tables`: the tidy tables and their export.
"""

from __future__ import annotations

from simulator.worlds.network.analysis.measures import (
    ROUND_MEASURES,
    assortativity,
    bimodality,
    round_measures,
    run_measures,
    trajectory_distance,
)
from simulator.worlds.network.analysis.runs import OpinionRun, TwinBook, load_runs
from simulator.worlds.network.analysis.summary import DISTANCE, SUMMARY, network_measures
from simulator.worlds.network.analysis.tables import NETWORK_TABLES, export_network
from simulator.worlds.network.analysis.twins import OTHER_SEED, SAME_SEED, Twin, find_twins

__all__ = [
    "DISTANCE",
    "NETWORK_TABLES",
    "OTHER_SEED",
    "ROUND_MEASURES",
    "SAME_SEED",
    "SUMMARY",
    "OpinionRun",
    "Twin",
    "TwinBook",
    "assortativity",
    "bimodality",
    "export_network",
    "find_twins",
    "load_runs",
    "network_measures",
    "round_measures",
    "run_measures",
    "trajectory_distance",
]
