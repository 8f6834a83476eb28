"""How long the no-LLM theory takes: the Zino-Ye-Cao coevolution in simulator/worlds/network/domain.

1. The target: 1,000 agents x 1,000 updates (one agent drawn per update, asynchronous: the
   `random` schedule) on a Barabasi-Albert graph (m = 5), LLM-SAM coefficients drawn at random
   (lambda as the cost), finite rationality
   (b = 4) so every update draws its action: best of `--repeat` runs, target under 1 s. The
   time includes turning the graph into neighbour lists, as a caller pays it.
2. For scale: `--rounds` rounds of the default schedule (a sweep: every agent revised once a
   round, in a random order), the same agents and graph, timed once, as microseconds per
   update.

    python bench/network_theory.py
    python bench/network_theory.py --agents 5000 --updates 5000 --rounds 100

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from simulator.worlds.network.domain.graphs import build_graphs  # noqa: E402
from simulator.worlds.network.domain.theory import coevolve  # noqa: E402

TARGET_S = 1.0


def agents(n: int, seed: int) -> dict:
    """Random starting opinions and actions and LLM-SAM coefficients (a + tau + f = 1)."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet([2.0, 4.0, 2.0], size=n)
    return {
        "opinions": rng.uniform(-1.0, 1.0, n),
        "actions": rng.choice([-1, 1], n),
        "a": weights[:, 0],
        "tau": weights[:, 1],
        "f": weights[:, 2],
        "cost": rng.uniform(0.1, 0.95, n),  # LLM-SAM's lambda
    }


def timed(graph, start: dict, rounds: int, per_round: int | None, seed: int) -> float:
    """Seconds for one run: `per_round` random updates a round, or (None) a sweep."""
    began = time.perf_counter()
    coevolve(
        graph,
        start["opinions"],
        start["actions"],
        a=start["a"],
        tau=start["tau"],
        f=start["f"],
        cost=start["cost"],
        mu=0.3,
        beta=4.0,
        information=[0.2] * rounds,
        rounds=rounds,
        schedule="sweep" if per_round is None else "random",
        updates_per_round=per_round,
        seed=seed,
    )
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=1000)
    p.add_argument("--updates", type=int, default=1000, help="updates in the target run")
    p.add_argument("--repeat", type=int, default=5, help="runs of the target; the best counts")
    p.add_argument("--rounds", type=int, default=1000, help="rounds of n updates (0: skip)")
    p.add_argument("--m", type=int, default=5, help="Barabasi-Albert edges per new node")
    args = p.parse_args(argv)

    graph = build_graphs({"type": "barabasi_albert", "n": args.agents, "m": args.m, "seed": 1})[0]
    start = agents(args.agents, seed=2)
    print(
        f"graph: Barabasi-Albert n = {args.agents}, m = {args.m} "
        f"({graph.number_of_edges():,} edges); b = 4, mu = 0.3"
    )
    runs = [timed(graph, start, 1, args.updates, seed) for seed in range(args.repeat)]
    best = min(runs)
    verdict = "met" if best < TARGET_S else "MISSED"
    print(
        f"{args.agents:,} agents x {args.updates:,} updates: best {best * 1000:.1f} ms, "
        f"median {statistics.median(runs) * 1000:.1f} ms over {args.repeat} runs "
        f"(target under {TARGET_S:.0f} s: {verdict}; "
        f"{best / args.updates * 1e6:.1f} us an update)"
    )
    if args.rounds:
        total = args.rounds * args.agents
        seconds = timed(graph, start, args.rounds, None, seed=0)
        print(
            f"{args.rounds:,} sweeps x {args.agents:,} updates ({total:,} updates): "
            f"{seconds:.2f} s, {seconds / total * 1e6:.2f} us an update"
        )


if __name__ == "__main__":
    main()
