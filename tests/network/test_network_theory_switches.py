"""The theory keeps LLM-SAM's direction for every coefficient, and its switches (who weighs
whose opinion, stubborn innovators, what a round is) do what the original does."""

from __future__ import annotations

import math
from itertools import pairwise

import networkx as nx
import numpy as np
import pytest

from simulator.worlds.network.domain.experiment import NetworkSettings, TheorySettings
from simulator.worlds.network.domain.theory import coevolve

LAMBDAS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
SEEDS = range(6)


def _population(seed: int, n: int = 40) -> tuple[nx.Graph, dict]:
    rng = np.random.default_rng(100 + seed)
    weights = rng.dirichlet([2.0, 3.0, 2.0], size=n)
    start = {
        "opinions": rng.uniform(-1.0, 1.0, n),
        "actions": rng.choice([-1, 1], n),
        "a": weights[:, 0],
        "tau": weights[:, 1],
        "f": weights[:, 2],
    }
    return nx.barabasi_albert_graph(n, 3, seed=seed), start


def _final_yes(graph, start, *, seed, rounds=5, **kw) -> float:
    run = coevolve(
        graph,
        start["opinions"],
        start["actions"],
        **{"a": start["a"], "tau": start["tau"], "f": start["f"], **kw},
        rounds=rounds,
        seed=seed,
    )
    return float(run.decisions[-1].mean())


@pytest.mark.parametrize("beta", [math.inf, 4.0])
@pytest.mark.parametrize("schedule", ["sweep", "random"])
def test_the_share_adopting_falls_as_lambda_rises(beta, schedule):
    """LLM-SAM: "the greater trade-off coefficient means that they are less likely to buy".
    The same draws at every lambda, so the share falls run by run, not only on average."""
    falls = 0
    for seed in SEEDS:
        graph, start = _population(seed)
        shares = [
            _final_yes(graph, start, seed=seed, cost=lam, beta=beta, schedule=schedule)
            for lam in LAMBDAS
        ]
        assert all(b <= a for a, b in pairwise(shares)), (seed, shares)
        falls += shares[-1] < shares[0]
    assert falls == len(SEEDS)


def test_lambda_as_a_cost_against_the_opinion():
    """Everyone at O = 0.75, all No, best response, no friends' pull (opinion weight 1): Yes
    exactly where O exceeds lambda, whatever the friends do."""
    graph = nx.complete_graph(10)
    runs = [
        coevolve(graph, [0.5] * 10, [-1] * 10, lam=1.0, cost=c, rounds=2, seed=1)
        for c in (0.1, 0.5, 0.74, 0.76, 0.9)
    ]
    shares = [float(run.decisions[-1].mean()) for run in runs]
    assert shares == [1.0, 1.0, 1.0, 0.0, 0.0]
    ties = coevolve(graph, [0.5] * 10, [-1] * 10, lam=1.0, cost=0.75, rounds=1, seed=1)
    assert 0 < ties.decisions[-1].mean() < 1  # O = lambda: a fair coin each


def _spread(values: np.ndarray) -> float:
    return float(np.var(values))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_higher_susceptibility_to_friends_pulls_opinions_together(seed):
    """LLM-SAM: a greater susceptibility to friends, "the more significant influence"; the
    rest of the weight stays on the agent's first opinion."""
    graph, start = _population(seed)
    spreads = []
    for a in (0.0, 0.25, 0.5, 0.75, 1.0):
        run = coevolve(
            graph, start["opinions"], start["actions"], a=a, tau=1.0 - a, f=0.0, rounds=4, seed=seed
        )
        spreads.append(_spread(run.opinions[-1]))
    assert all(b < a for a, b in pairwise(spreads)), spreads


@pytest.mark.parametrize("seed", SEEDS)
def test_a_higher_susceptibility_to_information_pulls_opinions_to_it(seed):
    graph, start = _population(seed)
    gaps = []
    for f in (0.0, 0.25, 0.5, 0.75, 1.0):
        run = coevolve(
            graph, start["opinions"], start["actions"], a=1.0 - f, tau=0.0, f=f,
            information=[0.8] * 3, rounds=3, seed=seed,
        )  # fmt: skip
        gaps.append(float(np.mean(np.abs(run.opinions[-1] - 0.8))))
    assert all(b < a for a, b in pairwise(gaps)), gaps


@pytest.mark.parametrize("seed", SEEDS)
def test_a_higher_stubbornness_keeps_opinions_at_the_first_ones(seed):
    graph, start = _population(seed)
    drifts = []
    for tau in (0.0, 0.25, 0.5, 0.75, 1.0):
        run = coevolve(
            graph, start["opinions"], start["actions"], a=1.0 - tau, tau=tau, f=0.0,
            rounds=3, seed=seed,
        )  # fmt: skip
        drifts.append(float(np.mean(np.abs(run.opinions[-1] - start["opinions"]))))
    assert all(b < a for a, b in pairwise(drifts)), drifts
    assert drifts[-1] == 0.0


def test_a_sweep_updates_every_agent_once_a_round_in_a_fresh_order():
    graph, start = _population(0, n=30)
    run = coevolve(graph, start["opinions"], start["actions"], rounds=4, seed=2, beta=3.0)
    rounds = run.chosen.reshape(4, 30)
    assert all(sorted(r.tolist()) == list(range(30)) for r in rounds)
    assert len({tuple(r.tolist()) for r in rounds}) == 4
    randomly = coevolve(
        graph, start["opinions"], start["actions"], rounds=1, seed=2, schedule="random"
    )
    assert len(set(randomly.chosen.tolist())) < 30  # n draws with replacement miss some
    with pytest.raises(ValueError, match="random schedule only"):
        coevolve(graph, start["opinions"], start["actions"], updates_per_round=5)


def test_stubborn_innovators_hold_yes_and_are_never_updated():
    graph, start = _population(1, n=30)
    for schedule in ("sweep", "random"):
        run = coevolve(
            graph, start["opinions"], start["actions"], stubborn=3, rounds=5, seed=4,
            schedule=schedule, beta=2.0, mu=0.5,
        )  # fmt: skip
        assert run.chosen.min() >= 3
        assert np.all(run.actions[:, :3] == 1) and np.all(run.opinions[:, :3] == 1.0)
    sweep = coevolve(graph, start["opinions"], start["actions"], stubborn=3, rounds=2, seed=4)
    assert sorted(sweep.chosen[:27].tolist()) == list(range(3, 30))
    with pytest.raises(ValueError, match="stubborn"):
        coevolve(graph, start["opinions"], start["actions"], stubborn=30)


def test_the_communication_graph_decides_whose_opinions_are_heard():
    """W = A/d hears the friends; a random walk on another graph (Zino's SRW(RRG(n, 4)))
    hears that graph's neighbours, while the actions still coordinate on A."""
    n = 12
    alone = nx.empty_graph(n)  # no friends on A: A/d hears nobody
    y0 = np.linspace(-1.0, 1.0, n)
    x0 = [-1] * n
    same = coevolve(alone, y0, x0, rounds=3, seed=1)
    assert np.allclose(same.opinions[-1], y0)
    talk = nx.random_regular_graph(4, n, seed=5)
    walk = coevolve(alone, y0, x0, rounds=1, schedule="random", updates_per_round=1, seed=1,
                    communication=talk)  # fmt: skip
    i = int(walk.chosen[0])
    assert walk.opinions[1][i] == pytest.approx(np.mean(y0[sorted(talk.adj[i])]))
    assert not np.allclose(
        coevolve(alone, y0, x0, rounds=3, seed=1, communication=talk).opinions[-1], y0
    )


def test_the_switches_keep_older_stored_settings_unchanged():
    """At their defaults the new switches stay out of a stored dump (an experiment's spec
    and version); a stored count of updates per round reads back as the random schedule."""
    dumped = NetworkSettings().model_dump(mode="json")["theory"]
    assert set(dumped) == {"alpha", "mu", "rationality", "updates_per_round", "information"}
    older = TheorySettings.model_validate({"updates_per_round": 200})
    assert older.schedule == "random"
    assert older.model_dump(mode="json") == {
        "alpha": 0.0, "mu": 0.0, "rationality": None, "updates_per_round": 200, "information": [],
    }  # fmt: skip
    chosen = TheorySettings(stubborn=2, communication="rrg_walk", schedule="random")
    assert {"stubborn", "communication", "schedule"} <= set(chosen.model_dump(mode="json"))
    assert TheorySettings.model_validate(chosen.model_dump(mode="json")) == chosen
    assert TheorySettings().full()["schedule"] == "sweep"
    with pytest.raises(ValueError, match="updates_per_round"):
        TheorySettings(schedule="sweep", updates_per_round=10)
