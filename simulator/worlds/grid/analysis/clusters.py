"""Clusters of agents per step: DBSCAN over positions with the torus Chebyshev distance.

As in the paper, eps is the run's message range R, so a cluster is a group of agents that can
talk to one another, directly or through neighbours. Our choices where the paper is silent:
- min_samples = 2 (a point counts itself): an agent with one neighbour within R is a core
  point, so a cluster is a connected group of at least two agents; a lone agent is noise
  (label -1) and is not a cluster.
- R = 0 means "the same cell": distances are integers, so eps = 0.5 (DBSCAN needs eps > 0)
  joins exactly the agents at distance 0, and eps = R joins those at distance <= R otherwise.
- Positions are taken at t = 0..T (the start, then after each step's moves; see runs.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simulator.errors import UserError
from simulator.worlds.grid.analysis.runs import GridRun
from simulator.worlds.grid.domain.rules import Position, distance

MIN_SAMPLES = 2
INSTALL_HINT = "pip install -e '.[analysis]'"


def require_sklearn() -> Any:
    """scikit-learn's DBSCAN class, or a UserError naming the extra to install."""
    try:
        from sklearn.cluster import DBSCAN
    except ImportError:
        raise UserError(
            "grid clusters are found with scikit-learn's DBSCAN, which is not installed",
            fix=INSTALL_HINT,
        ) from None
    return DBSCAN


def distance_matrix(
    positions: Sequence[Position], width: int, height: int, torus: bool = True
) -> list[list[int]]:
    """Pairwise Chebyshev distances, wrapping on a torus (rules.distance)."""
    return [[distance(a, b, width, height, torus) for b in positions] for a in positions]


def eps_for(radius: int) -> float:
    return float(radius) if radius > 0 else 0.5


def cluster_labels(
    positions: Sequence[Position], radius: int, width: int, height: int, torus: bool = True
) -> list[int]:
    """DBSCAN labels, one per agent: 0, 1, … per cluster (numbered by first agent), -1 alone."""
    if len(positions) < MIN_SAMPLES:
        return [-1] * len(positions)
    dbscan = require_sklearn()
    import numpy as np

    matrix = np.asarray(distance_matrix(positions, width, height, torus), dtype=float)
    found = dbscan(eps=eps_for(radius), min_samples=MIN_SAMPLES, metric="precomputed")
    raw = [int(label) for label in found.fit_predict(matrix)]
    order: dict[int, int] = {}  # renumber by first agent, so labels do not depend on sklearn
    for label in raw:
        if label >= 0:
            order.setdefault(label, len(order))
    return [order.get(label, -1) for label in raw]


def sizes(labels: Sequence[int]) -> list[int]:
    """Cluster sizes, largest first."""
    counts: dict[int, int] = {}
    for label in labels:
        if label >= 0:
            counts[label] = counts.get(label, 0) + 1
    return sorted(counts.values(), reverse=True)


def cluster_measures(run: GridRun) -> dict:
    """Per time t = 0..T: `labels` (per agent), `count` (clusters), `sizes` (largest first),
    `clustered` (agents in any cluster); and the run's mean and final figures."""
    labels = [
        cluster_labels(frame, run.radius, run.width, run.height, run.torus)
        for frame in run.positions
    ]
    counts = [len(sizes(frame)) for frame in labels]
    clustered = [sum(1 for label in frame if label >= 0) for frame in labels]
    agents = len(run.names) or 1
    return {
        "eps": eps_for(run.radius),
        "min_samples": MIN_SAMPLES,
        "labels": labels,
        "count": counts,
        "sizes": [sizes(frame) for frame in labels],
        "clustered": clustered,
        "mean_count": sum(counts) / len(counts),
        "final_count": counts[-1],
        "final_clustered_share": clustered[-1] / agents,
        "largest_final": max(sizes(labels[-1]), default=0),
    }
