"""What an opinion-network run shows, round by round (shared/specs/llm-sam-network.md).

A run is two tables indexed [round][agent]: opinions (0..10) and decisions (True: Yes), as an
LLM run stores them or as `theory.TheoryRun.scores` / `.decisions` give them, so the LLMs and
the theory are measured the same way. Thresholds: an opinion of 5 or more is favourable, and
a majority is strictly more than half. Undefined figures (a variance-free bimodality, the
assortativity of a graph where every agent acts alike) are None, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx
import numpy as np

from simulator.worlds.network.domain.graphs import graph_for_round

FAVOURABLE = 5  # an opinion of 5 or more goes with Yes
BIMODAL = 5 / 9  # a bimodality coefficient above this suggests two camps (a uniform's value)
ROUND_MEASURES = {
    "mean_opinion": "mean opinion (0..10)",
    "share_yes": "share of agents deciding Yes",
    "opinion_variance": "population variance of the opinions",
    "bimodality": "Sarle's bimodality coefficient of the opinions (> 5/9: two camps)",
    "private_public_gap": "share Yes minus mean opinion / 10",
    "unpopular_norm": "most act Yes while the mean opinion is below 5, or the reverse",
    "paradigm_shift": "a majority No at round 0 has become a majority Yes",
    "consistency": "share of agents whose opinion (>= 5) agrees with their decision",
    "assortativity": "attribute assortativity of decisions on the graph",
}


def bimodality(opinions: Sequence[float]) -> float | None:
    """Sarle's coefficient (g^2 + 1) / (k + 3 (n-1)^2 / ((n-2)(n-3))) with the sample
    skewness g and excess kurtosis k (bias-corrected); None below 4 agents or with no spread."""
    values = np.asarray(opinions, dtype=float)
    n = len(values)
    if n < 4:
        return None
    centred = values - values.mean()
    m2 = float(np.mean(centred**2))
    if m2 <= 1e-12:
        return None
    g1 = float(np.mean(centred**3)) / m2**1.5
    g2 = float(np.mean(centred**4)) / m2**2 - 3.0
    skew = g1 * math.sqrt(n * (n - 1)) / (n - 2)
    kurt = ((n + 1) * g2 + 6.0) * (n - 1) / ((n - 2) * (n - 3))
    return (skew**2 + 1.0) / (kurt + 3.0 * (n - 1) ** 2 / ((n - 2) * (n - 3)))


def majority(decisions: Sequence[bool]) -> bool | None:
    """True for a majority Yes, False for a majority No, None on a tie (or no agents)."""
    yes = sum(bool(d) for d in decisions)
    no = len(decisions) - yes
    return None if yes == no else yes > no


def assortativity(graph: nx.Graph, decisions: Sequence[bool]) -> float | None:
    """Newman's attribute assortativity of Yes/No over the graph's edges (self-loops left
    out: seeing one's own answer is not a tie between two agents). None when every agent acts
    alike or there is no edge: the coefficient is 0/0 there."""
    if len(set(map(bool, decisions))) < 2:
        return None
    plain = nx.Graph()
    plain.add_nodes_from(range(len(decisions)))
    plain.add_edges_from((u, v) for u, v in graph.edges() if u != v)
    if plain.number_of_edges() == 0:
        return None
    nx.set_node_attributes(plain, {i: bool(d) for i, d in enumerate(decisions)}, "yes")
    with np.errstate(invalid="ignore", divide="ignore"):
        value = nx.attribute_assortativity_coefficient(plain, "yes")
    return None if math.isnan(value) else float(value)


def round_measures(
    opinions: Sequence[float],
    decisions: Sequence[bool],
    graph: nx.Graph | None = None,
    first_decisions: Sequence[bool] | None = None,
) -> dict:
    """The `ROUND_MEASURES` of one round; `first_decisions` (round 0) for the paradigm shift,
    `graph` for the assortativity (None without them)."""
    if len(opinions) != len(decisions) or not len(opinions):
        raise ValueError(f"{len(opinions)} opinions and {len(decisions)} decisions")
    values = np.asarray(opinions, dtype=float)
    yes = np.asarray(decisions, dtype=bool)
    mean, share = float(values.mean()), float(yes.mean())
    now = majority(decisions)
    before = majority(first_decisions) if first_decisions is not None else None
    return {
        "mean_opinion": mean,
        "share_yes": share,
        "opinion_variance": float(values.var()),
        "bimodality": bimodality(values),
        "private_public_gap": share - mean / 10.0,
        "unpopular_norm": (now is True and mean < FAVOURABLE)
        or (now is False and mean > FAVOURABLE),
        "paradigm_shift": None if first_decisions is None else before is False and now is True,
        "consistency": float(np.mean((values >= FAVOURABLE) == yes)),
        "assortativity": assortativity(graph, decisions) if graph is not None else None,
    }


def run_measures(
    opinions: Sequence[Sequence[float]],
    decisions: Sequence[Sequence[bool]],
    graphs: Sequence[nx.Graph] | None = None,
) -> list[dict]:
    """`round_measures` for every round, with `round` (0 is the table). Round t is measured on
    the graph its agents answered on (`graph_for_round`), the last one when the list ends."""
    if len(opinions) != len(decisions):
        raise ValueError(f"{len(opinions)} rounds of opinions, {len(decisions)} of decisions")
    out = []
    for t, (row_o, row_d) in enumerate(zip(opinions, decisions, strict=True)):
        graph = graph_for_round(graphs, t) if graphs else None
        out.append({"round": t, **round_measures(row_o, row_d, graph, decisions[0])})
    return out


def _rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)))


def trajectory_distance(
    opinions_a: Sequence[Sequence[float]],
    decisions_a: Sequence[Sequence[bool]],
    opinions_b: Sequence[Sequence[float]],
    decisions_b: Sequence[Sequence[bool]],
) -> dict:
    """How far apart two runs of the same agents are, over the rounds both have: RMSE of the
    mean-opinion series, of the share-Yes series and of every agent's opinion, and the share
    of (round, agent) decisions that differ. 0 everywhere: the same trajectory."""
    rounds = min(len(opinions_a), len(opinions_b))
    oa = np.asarray(opinions_a[:rounds], dtype=float)
    ob = np.asarray(opinions_b[:rounds], dtype=float)
    da = np.asarray(decisions_a[:rounds], dtype=bool)
    db = np.asarray(decisions_b[:rounds], dtype=bool)
    if oa.shape != ob.shape or da.shape != oa.shape or db.shape != ob.shape:
        raise ValueError(f"the runs differ in shape: {oa.shape} and {ob.shape}")
    return {
        "rounds": rounds,
        "mean_opinion_rmse": _rmse(oa.mean(axis=1), ob.mean(axis=1)),
        "share_yes_rmse": _rmse(da.mean(axis=1), db.mean(axis=1)),
        "opinion_rmse": _rmse(oa, ob),
        "decision_disagreement": float(np.mean(da != db)),
    }
