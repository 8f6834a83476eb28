"""Per-round network measures and the trajectory distance, on tiny hand-made rounds."""

from __future__ import annotations

import networkx as nx
import pytest

from simulator.worlds.network.analysis import (
    assortativity,
    bimodality,
    round_measures,
    run_measures,
    trajectory_distance,
)
from simulator.worlds.network.domain.graphs import build_graphs
from simulator.worlds.network.domain.theory import coevolve

T, F = True, False


def test_one_round_by_hand():
    got = round_measures([2, 3, 8, 9], [F, F, T, T])
    assert got["mean_opinion"] == 5.5
    assert got["share_yes"] == 0.5
    assert got["opinion_variance"] == pytest.approx((3.5**2 + 2.5**2) * 2 / 4)
    assert got["private_public_gap"] == pytest.approx(0.5 - 0.55)
    assert got["consistency"] == 1.0
    assert got["unpopular_norm"] is False  # a tie is no majority
    assert got["paradigm_shift"] is None and got["assortativity"] is None
    assert round_measures([5, 4, 9], [F, F, T])["consistency"] == pytest.approx(2 / 3)  # 5, No


def test_unpopular_norm_both_ways():
    assert round_measures([3, 3, 4], [T, T, F])["unpopular_norm"] is True  # act Yes, think No
    assert round_measures([8, 7, 9], [F, F, T])["unpopular_norm"] is True  # act No, think Yes
    assert round_measures([8, 7, 9], [T, T, F])["unpopular_norm"] is False
    assert round_measures([5, 5, 5], [T, T, F])["unpopular_norm"] is False  # 5 is not below 5


def test_paradigm_shift_from_majority_no_to_majority_yes():
    opinions = [[3, 3, 3], [5, 5, 5], [7, 7, 7]]
    decisions = [[F, F, T], [F, T, F], [T, T, F]]
    rows = run_measures(opinions, decisions)
    assert [r["round"] for r in rows] == [0, 1, 2]
    assert [r["paradigm_shift"] for r in rows] == [False, False, True]
    assert [r["share_yes"] for r in rows] == pytest.approx([1 / 3, 1 / 3, 2 / 3])
    assert run_measures([[3, 3], [7, 7]], [[T, T], [T, T]])[1]["paradigm_shift"] is False


def test_bimodality_by_hand():
    """Two camps of four, 0 and 10: skewness 0, excess kurtosis -2 (biased); corrected,
    kurt = (9 (-2) + 6) 7 / (6 x 5) = -2.8, and 3 x 7^2 / 30 = 4.9, so BC = 1 / 2.1."""
    assert bimodality([0, 0, 0, 0, 10, 10, 10, 10]) == pytest.approx(1 / 2.1)
    assert bimodality([5, 5, 5, 5]) is None
    assert bimodality([1, 2, 3]) is None
    camps = [0] * 20 + [10] * 20
    peaked = [5] * 30 + [4, 6] * 5
    assert bimodality(camps) > 5 / 9 > bimodality(peaked)


def test_assortativity_by_hand_ignores_self_loops_and_uniform_rounds():
    """Path 0-1-2-3, Yes Yes No No: edges YY, YN, NN; e_YY = e_NN = 2/6, a_Y = a_N = 1/2, so
    r = (4/6 - 1/2) / (1 - 1/2) = 1/3. Complete 4 with loops: YY, NN and four YN: r = -1/3."""
    assert assortativity(nx.path_graph(4), [T, T, F, F]) == pytest.approx(1 / 3)
    loops = build_graphs({"type": "complete", "n": 4})[0]
    assert assortativity(loops, [T, T, F, F]) == pytest.approx(-1 / 3)
    assert assortativity(loops, [T, T, T, T]) is None
    assert assortativity(nx.empty_graph(3), [T, F, T]) is None
    assert round_measures([6, 7, 2, 1], [T, T, F, F], graph=nx.path_graph(4))[
        "assortativity"
    ] == pytest.approx(1 / 3)


def test_trajectory_distance_by_hand():
    same = trajectory_distance(
        [[5, 5], [6, 6]], [[T, F], [T, T]], [[5, 5], [6, 6]], [[T, F], [T, T]]
    )
    assert same == {
        "rounds": 2,
        "mean_opinion_rmse": 0.0,
        "share_yes_rmse": 0.0,
        "opinion_rmse": 0.0,
        "decision_disagreement": 0.0,
    }
    got = trajectory_distance(
        [[5, 5], [6, 6], [9, 9]], [[T, F], [T, T], [T, T]], [[5, 5], [4, 4]], [[T, F], [F, F]]
    )
    assert got["rounds"] == 2  # the rounds both runs have
    assert got["mean_opinion_rmse"] == pytest.approx(2**0.5)  # series differ by 0 and 2
    assert got["opinion_rmse"] == pytest.approx(2**0.5)
    assert got["share_yes_rmse"] == pytest.approx((0.5) ** 0.5)  # 0 and 1
    assert got["decision_disagreement"] == 0.5
    with pytest.raises(ValueError, match="differ in shape"):
        trajectory_distance([[5, 5]], [[T, F]], [[5, 5, 5]], [[T, F, T]])


def test_a_theory_run_is_measured_like_an_llm_run():
    graphs = build_graphs({"type": "watts_strogatz", "n": 30, "k": 4, "p": 0.1, "seed": 1})
    run = coevolve(graphs, [0.5] * 15 + [-0.5] * 15, [1] * 15 + [-1] * 15, beta=5.0, seed=2)
    rows = run_measures(run.scores.tolist(), run.decisions.tolist(), graphs)
    assert len(rows) == 4
    assert rows[0]["mean_opinion"] == pytest.approx((7 * 15 + 2 * 15) / 30)
    assert rows[0]["assortativity"] > 0.5  # the two camps sit on two halves of the ring
    assert all(r["consistency"] is not None for r in rows)
    zero = trajectory_distance(run.scores, run.decisions, run.scores, run.decisions)
    assert zero["opinion_rmse"] == 0.0
