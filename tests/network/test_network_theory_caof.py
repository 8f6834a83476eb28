"""The theory against the original's own logic: CHAOS/CAOf.m of lzino90/coevolutionary (MIT
licence), ported here line by line, fed the very draws `coevolve` uses, update for update.

The fixture (tests/fixtures/caof/trace.json, written by `python
tests/network/test_network_theory_caof.py`) holds the inputs, the draws as MATLAB sees them
(randi(r) from 1, rand) and the port's state after every n updates; the port is checked against
it too, so neither side can drift unseen.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from simulator.worlds.network.domain.theory import coevolve  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "caof" / "trace.json"


def srw(adjacency: np.ndarray) -> np.ndarray:
    """SRW.m: P = diag(d.^(-1)) * A, a node with no neighbours given a self-loop."""
    a = adjacency.astype(float).copy()
    d = a.sum(axis=1)
    for i in range(len(a)):
        if d[i] == 0:
            a[i, i], d[i] = 1.0, 1.0
    return np.diag(1.0 / d) @ a


def caof(A, W, alpha, lam, mu, beta, x0, y0, T, s, randi, rand):
    """CAOf.m's ten-argument branch, with MATLAB's randi(r) and rand replaced by the given
    numbers (1-based agents); returns the (x, y) state after every update."""
    n = A.shape[1]
    r = n - s
    d = A.sum(axis=1)
    x = np.array(x0, dtype=float)
    y = np.array(y0, dtype=float)
    x[:s] = 1  # x(1:s)=1;
    y[:s] = 1  # y(1:s)=1;
    states = []
    t = 0
    while t < T:
        t = t + 1
        i = s + randi[t - 1] - 1  # i=s+randi(r);  (0-based here)
        assert 1 <= randi[t - 1] <= r
        plus = math.exp(
            beta * (lam * y[i] / 2 + 0.25 * (1 - lam) * A[i, :] @ (1 + x) * (1 + alpha) / d[i])
        )
        minus = math.exp(beta * (-lam * y[i] / 2 + 0.25 * (1 - lam) * A[i, :] @ (1 - x) / d[i]))
        if rand[t - 1] < plus / (plus + minus):  # noqa: SIM108 (as CAOf.m writes it)
            temp = 1
        else:
            temp = -1
        y[i] = (1 - mu) * W[i, :] @ y + mu * A[i, :] @ x / d[i]
        x[i] = temp
        states.append((x.copy(), y.copy()))
    return states


def _inputs() -> dict:
    """A small run in the shape of the paper's Fig3.m / Fig4.m (influence RRG(n, 8), opinions
    on SRW(RRG(n, 4)), one stubborn innovator, x0 = y0 = [1 -ones(1, n-1)], T = 4 n^2)."""
    n = 12
    rng = np.random.default_rng(20)
    influence = nx.random_regular_graph(8, n, seed=1)
    talk = nx.random_regular_graph(4, n, seed=2)
    start = [1.0] + [-1.0] * (n - 1)
    s = 1
    T = 4 * n * n
    return {
        "n": n,
        "alpha": 0.5,
        "lambda": 0.5,
        "mu": 0.3,
        "beta": 3.0,  # the paper's 20 freezes 12 agents at No: too quiet a check
        "s": s,
        "T": T,
        "x0": start,
        "y0": [0.4] + [-0.2 + 0.05 * k for k in range(n - 1)],
        "influence_edges": sorted(map(sorted, influence.edges())),
        "communication_edges": sorted(map(sorted, talk.edges())),
        "randi": (1 + rng.integers(0, n - s, size=T)).tolist(),
        "rand": rng.random(size=T).tolist(),
    }


def _matrix(n: int, edges: list) -> np.ndarray:
    a = np.zeros((n, n))
    for u, v in edges:
        a[u, v] = a[v, u] = 1.0
    return a


def _port(case: dict) -> list:
    n = case["n"]
    A = _matrix(n, case["influence_edges"])
    W = srw(_matrix(n, case["communication_edges"]))
    return caof(
        A, W, case["alpha"], case["lambda"], case["mu"], case["beta"], case["x0"], case["y0"],
        case["T"], case["s"], case["randi"], case["rand"],
    )  # fmt: skip


def write_fixture() -> None:
    case = _inputs()
    states = _port(case)
    n = case["n"]
    case["after_every_n_updates"] = {
        "x": [states[k][0].astype(int).tolist() for k in range(n - 1, case["T"], n)],
        "y": [states[k][1].tolist() for k in range(n - 1, case["T"], n)],
    }
    FIXTURE.write_text(json.dumps(case) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def case() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_the_port_of_caof_reproduces_the_stored_trace(case):
    states = _port(case)
    n = case["n"]
    every = case["after_every_n_updates"]
    assert [states[k][0].astype(int).tolist() for k in range(n - 1, case["T"], n)] == every["x"]
    assert np.allclose([states[k][1] for k in range(n - 1, case["T"], n)], every["y"], atol=1e-15)
    flips = sum(int((states[k - 1][0] != states[k][0]).sum()) for k in range(1, case["T"]))
    assert flips > 100 and every["x"][-1].count(1) > every["x"][0].count(1)  # a run that moves


def test_coevolve_matches_caof_update_for_update_on_the_same_draws(case):
    """lam is ZYC's own-opinion weight, cost 1/2 (no cost), a = 1 (ZYC's opinion rule), W the
    random walk on the communication graph, the random schedule: CAOf.m exactly."""
    n, s = case["n"], case["s"]
    states = _port(case)
    picks = [s + k - 1 for k in case["randi"]]
    run = coevolve(
        nx.Graph(case["influence_edges"]),
        case["y0"],
        case["x0"],
        lam=case["lambda"],
        cost=0.5,
        alpha=case["alpha"],
        mu=case["mu"],
        beta=case["beta"],
        rounds=case["T"] // n,
        schedule="random",
        updates_per_round=n,
        communication=nx.Graph(case["communication_edges"]),
        stubborn=s,
        draws=(picks, case["rand"]),
    )
    assert run.chosen_action.tolist() == [int(states[k][0][picks[k]]) for k in range(case["T"])]
    every = case["after_every_n_updates"]
    assert run.actions[1:].tolist() == every["x"]
    assert np.max(np.abs(run.opinions[1:] - np.array(every["y"]))) < 1e-12
    assert run.actions[:, 0].tolist() == [1] * (case["T"] // n + 1)  # the stubborn innovator


def test_graph_nodes_follow_the_table_order(case):
    """nx.Graph(edges) numbers nodes by first appearance; neighbours() reads node i as agent
    i, so the comparison above is only fair if every node 0..n-1 is present."""
    assert sorted(nx.Graph(case["influence_edges"]).nodes) == list(range(case["n"]))


if __name__ == "__main__":
    write_fixture()
    print(f"wrote {FIXTURE}")
