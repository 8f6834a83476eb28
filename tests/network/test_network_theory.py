"""The no-LLM theory (Zino-Ye-Cao coevolution) and DeGroot, against hand computations."""

from __future__ import annotations

import json
import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from simulator.worlds.network.domain.agents_table import read_agents
from simulator.worlds.network.domain.answers import Answer, parse_answer, round_zero
from simulator.worlds.network.domain.graphs import build_graphs
from simulator.worlds.network.domain.theory import (
    _p_yes,
    coevolve,
    degroot,
    from_agents,
    rounded_mean,
)

SHIPPED = Path(__file__).resolve().parents[2] / "prompts" / "network" / "agents_synthetic.csv"


def test_lam_1_best_response_acts_on_the_sign_of_the_opinion_every_update():
    graph = nx.barabasi_albert_graph(60, 3, seed=5)
    rng = np.random.default_rng(1)
    y0 = rng.uniform(-1, 1, 60)
    x0 = rng.choice([-1, 1], 60)
    run = coevolve(graph, y0, x0, lam=1.0, beta=math.inf, mu=0.4, rounds=20, seed=3)
    assert len(run.chosen) == 20 * 60
    nonzero = run.chosen_opinion != 0
    assert nonzero.sum() > 1000
    assert np.array_equal(run.chosen_action[nonzero], np.sign(run.chosen_opinion[nonzero]))


def test_a_fixed_seed_reproduces_a_stored_trace():
    """The draws (who updates, which action each drew) were computed once with numpy's PCG64
    (default_rng): pinned, they detect a change of the random stream, not its correctness.
    Everything else is derived here from those draws by ZYC's equations (a = 1, on the
    cycle's two neighbours): each update's opinion, the actions after each round and the
    0..10 scores."""
    y0, x0 = [-0.6, -0.2, 0.1, 0.5, 0.9], [-1, -1, 1, 1, -1]
    mu = 0.3
    params = dict(
        lam=0.4, alpha=0.2, mu=mu, beta=3.0, rounds=3, schedule="random", updates_per_round=4
    )
    run = coevolve(nx.cycle_graph(5), y0, x0, **params, seed=2024)
    assert run.chosen.tolist() == [1, 3, 0, 1, 1, 1, 4, 3, 4, 4, 0, 0]
    assert run.chosen_action.tolist() == [1, 1, -1, 1, -1, -1, 1, 1, 1, 1, -1, -1]
    y, x = list(y0), list(x0)
    opinions, actions = [list(y)], [list(x)]
    draws = zip(run.chosen.tolist(), run.chosen_action.tolist(), strict=True)
    for update, (i, drawn) in enumerate(draws):
        left, right = (i - 1) % 5, (i + 1) % 5
        y[i] = (1 - mu) * (y[left] + y[right]) / 2 + mu * (x[left] + x[right]) / 2
        x[i] = drawn
        if update % 4 == 3:  # the end of a round of four updates
            opinions.append(list(y))
            actions.append(list(x))
    assert np.allclose(run.opinions, opinions, rtol=0, atol=1e-12)
    assert run.actions.tolist() == actions
    assert run.actions.tolist()[1] == [-1, 1, 1, 1, -1]  # the actions do change
    assert run.scores.tolist() == [[int((o + 1) * 5 + 1e-9) for o in row] for row in opinions]
    args = (nx.cycle_graph(5), y0, x0)
    again = coevolve(*args, **params, seed=2024)
    assert np.array_equal(again.opinions, run.opinions)
    assert np.array_equal(again.actions, run.actions)
    other = coevolve(*args, **params, seed=2025)
    assert other.chosen.tolist() != run.chosen.tolist()


def test_one_update_follows_the_equations():
    """ZYC's opinion rule (a = 1): y_i <- (1 - mu) mean_j y_j + mu mean_j x_j, using the
    actions from before the update; the action from the sign of p+ - p- (b = inf)."""
    graph = nx.complete_graph(4)
    y0, x0 = [0.8, -0.4, 0.2, -0.6], [1, -1, -1, 1]
    alpha, lam, mu = 0.5, 0.3, 0.25
    run = coevolve(
        graph,
        y0,
        x0,
        lam=lam,
        alpha=alpha,
        mu=mu,
        rounds=1,
        schedule="random",
        updates_per_round=1,
        seed=11,
    )
    i = int(run.chosen[0])
    others = [j for j in range(4) if j != i]
    d = 3
    p_plus = lam * y0[i] / 2 + (1 - lam) * (1 + alpha) / (4 * d) * sum(1 + x0[j] for j in others)
    p_minus = -lam * y0[i] / 2 + (1 - lam) / (4 * d) * sum(1 - x0[j] for j in others)
    expected_y = (1 - mu) * np.mean([y0[j] for j in others]) + mu * np.mean([x0[j] for j in others])
    assert run.opinions[1][i] == pytest.approx(expected_y)
    assert run.actions[1][i] == (1 if p_plus > p_minus else -1)
    assert [run.opinions[1][j] for j in others] == [y0[j] for j in others]


def test_llm_sam_weights_stubbornness_and_outside_information():
    graph = nx.complete_graph(3)
    y0, x0 = [0.5, -0.5, 0.0], [1, -1, 1]
    stubborn = coevolve(graph, y0, x0, a=0.0, tau=1.0, f=0.0, rounds=5, seed=1)
    assert np.allclose(stubborn.opinions, y0)
    news = coevolve(graph, y0, x0, a=0.0, tau=0.0, f=1.0, information=[0.9, -0.3], rounds=2, seed=1)
    round_1_movers = set(news.chosen[:3].tolist())
    assert all(news.opinions[1][i] == pytest.approx(0.9) for i in round_1_movers)
    no_news = coevolve(graph, y0, x0, a=0.0, tau=0.0, f=1.0, rounds=3, seed=1)
    assert np.allclose(no_news.opinions, y0)  # no information: the f share stays put


def test_round_zero_of_the_theory_is_the_tables_round_zero():
    rows = read_agents(SHIPPED)
    start = from_agents(rows)
    graph = build_graphs({"type": "barabasi_albert", "n": 50, "m": 5, "seed": 1})[0]
    run = coevolve(
        graph, start.opinions, start.actions, a=start.a, tau=start.tau, f=start.f,
        cost=start.lam, beta=4.0, rounds=3, seed=7,
    )  # fmt: skip
    assert run.scores[0].tolist() == [round_zero(r).opinion for r in rows]
    assert run.decisions[0].tolist() == [round_zero(r).decision for r in rows]
    assert run.opinions.shape == (4, 50)
    assert np.all((run.scores >= 0) & (run.scores <= 10))


def test_snapshots_change_who_is_heard():
    empty, full = nx.empty_graph(3), nx.complete_graph(3)
    y0, x0 = [1.0, -1.0, 0.0], [1, -1, 1]
    run = coevolve([empty, full], y0, x0, rounds=2, seed=4)
    assert np.allclose(run.opinions[1], y0)  # round 1 on the empty graph: nobody hears anyone
    assert not np.allclose(run.opinions[2], y0)


def test_the_logit_rule_is_overflow_safe():
    assert _p_yes(0.0, 5.0) == 0.5
    assert _p_yes(1.0, 0.5) == pytest.approx(1 / (1 + math.exp(-0.5)))
    assert _p_yes(1e6, 1.0) == 1.0
    assert _p_yes(1e6, -1.0) == 0.0
    assert _p_yes(math.inf, 0.0) == 0.5


def test_rounded_mean_rounds_half_up_in_integers():
    assert rounded_mean([4, 5]) == 5
    assert rounded_mean([0, 6, 9]) == 5
    assert rounded_mean([1, 2]) == 2
    assert rounded_mean([1, 1, 2]) == 1
    assert rounded_mean([10]) == 10


def test_degroot_on_a_three_node_path_by_hand():
    """0 - 1 - 2 with opinions 0, 6, 9. Round 1: node 0 hears 6; node 1 hears 0 and 9 (4.5 ->
    5); node 2 hears 6. Round 2: 5; (6 + 6) / 2 = 6; 5."""
    assert degroot(nx.path_graph(3), [0, 6, 9], 2).tolist() == [[0, 6, 9], [6, 5, 6], [5, 6, 5]]
    matrix = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    assert degroot(matrix, [0, 6, 9], 2).tolist() == [[0, 6, 9], [6, 5, 6], [5, 6, 5]]
    # a complete group with self-loops hears itself too: everyone takes (0 + 6 + 9) / 3
    loops = build_graphs({"type": "complete", "n": 3})[0]
    assert degroot(loops, [0, 6, 9], 1).tolist() == [[0, 6, 9], [5, 5, 5]]
    isolated = nx.empty_graph(2)
    assert degroot(isolated, [3, 8], 2).tolist() == [[3, 8], [3, 8], [3, 8]]


def test_a_scripted_model_reading_its_friends_json_matches_degroot():
    """The spec's check without an engine: each agent's 'model' reads its neighbours'
    previous answers as JSON and answers the rounded mean; parsed back, it is DeGroot."""
    rows = read_agents(SHIPPED)
    graph = build_graphs({"type": "barabasi_albert", "n": 50, "m": 3, "seed": 2})[0]
    answers = [round_zero(r) for r in rows]
    history = [[a.opinion for a in answers]]
    for _ in range(4):
        shown = [json.dumps([answers[j].as_json() for j in graph.adj[i]]) for i in range(50)]
        replies = [
            json.dumps(
                {
                    "Thought": "I follow my friends.",
                    "Opinion": rounded_mean([a["Opinion"] for a in json.loads(text)]),
                    "Decision": "Yes",
                }
            )
            for text in shown
        ]
        answers = [parse_answer(reply) or Answer("", -1, False) for reply in replies]
        history.append([a.opinion for a in answers])
    expected = degroot(graph, history[0], 4)
    assert history == expected.tolist()
