"""The coevolution theory as a world of the step loop: the LLM run's twin, with no model.

A theory run (`llm-sim run EXP --theory`) has the same graph, agents table, scenario and
rounds as an LLM run and stores the same rows in `network_rounds`, so the measures and the
report read both alike. Round 0 is the table's answer (as in an LLM run); rounds 1, 2, ...
are the theory's state after each round of updates (domain/network/theory.py, which
documents how the four coefficients map onto it, and the switches: schedule, communication
graph, stubborn innovators), with `exact_opinion` beside the
whole-number `opinion`: the theory's opinion on the same 0..10 scale before rounding down.
The whole trajectory is computed from the stored seed before the first round is stored, so a
resumed run stores the very rounds the killed one would have.

A fork of a theory run at round N (services/world_forks.py) shares rounds 0..N-1 and continues
from the state stored at round N-1 (each agent's decision and `exact_opinion`, six decimals)
with its own draws from its seed over rounds N.. (the tau share still pulls to the table's
opinions); the parent's seed draws other updates from there, since the theory draws a whole
run's updates at once.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from simulator.engine.step_loop import StepRun, run_world
from simulator.worlds.network.domain.answers import Answer, round_zero
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.domain.graphs import graph_for_round
from simulator.worlds.network.domain.theory import TheoryRun, coevolve, from_agents
from simulator.worlds.network.engine import events as nev
from simulator.worlds.network.engine.run import (
    COLLECTION,
    NetworkRun,
    graphs_of,
    round_row,
    stored_history,
    stored_rows,
)


async def run_theory(run: NetworkRun) -> str:
    """Run (or resume) a theory run to the end; return its final status."""
    loop = StepRun(run.run_id, run.recorder, run.on_event, run.stop)
    return await run_world(loop, TheoryNetwork(run))


def trajectory(spec: NetworkSpec, state: list[dict] | None = None) -> tuple[TheoryRun, int]:
    """The theory on the run's snapshots, agents and settings, from its seed, and the round
    its row 0 is: 0, or for a fork N - 1, whose rows (`state`, one per agent) it starts from."""
    start = from_agents([record.row() for record in spec.agents])
    theory = spec.settings.theory
    news = [
        theory.information[t] if t < len(theory.information) else None for t in range(spec.rounds)
    ]
    graphs = graphs_of(spec)
    opinions, actions, first = start.opinions, start.actions, 0
    if state:
        first = state[0]["round"]
        done = sorted(state, key=lambda r: r["agent_index"])
        opinions = np.clip([r["exact_opinion"] / 5.0 - 1.0 for r in done], -1.0, 1.0)
        actions = np.array([1 if r["decision"] == "Yes" else -1 for r in done])
        graphs = graphs[min(first, len(graphs) - 1) :]  # round t uses snapshot t - 1
        news = news[first:]
    run = coevolve(
        graphs,
        opinions,
        actions,
        lam=theory.opinion_weight,
        cost=start.lam,
        a=start.a,
        tau=start.tau,
        f=start.f,
        alpha=theory.alpha,
        mu=theory.mu,
        beta=math.inf if theory.rationality is None else theory.rationality,
        information=news,
        rounds=spec.rounds - first,
        schedule=theory.schedule,
        updates_per_round=theory.updates_per_round,
        communication=communication_graph(spec),
        stubborn=theory.stubborn,
        seed=spec.seed,
        initial=start.opinions,
    )
    return run, first


def communication_graph(spec: NetworkSpec) -> nx.Graph | None:
    """W's graph: None for A/d, or `rrg_walk`'s random regular graph (networkx, as Zino's
    RRG.m builds one), drawn from the run's seed (a fork, with its own seed, draws its own)."""
    theory = spec.settings.theory
    if theory.communication != "rrg_walk":
        return None
    return nx.random_regular_graph(theory.communication_degree, len(spec.agents), seed=spec.seed)


class TheoryNetwork:
    """Each step stores one round of the precomputed trajectory."""

    def __init__(self, run: NetworkRun):
        self.run_ = run
        self.spec = run.spec
        self.names = run.spec.names
        self.graphs = graphs_of(run.spec)
        self.stored = 0
        self.partial: set[str] = set()
        self.trace: TheoryRun | None = None
        self.first = 0  # the round the trace's row 0 is (a fork's: the round before its point)

    async def prepare(self) -> None:
        run, recorder = self.run_, self.run_.recorder
        rows = stored_rows(recorder)
        history, self.partial = stored_history(self.spec, rows)
        self.stored = len(history)
        own = [row for row in rows if row["conversation_id"] == run.run_id]  # not a fork's shared
        recorder.counters["messages"] += sum(row["round"] < self.stored for row in own)
        # a fork's shared rows (stored by its ancestors), by round: it continues from the last
        shared = [row for row in rows if row["conversation_id"] != run.run_id]
        last = [r for r in shared if r["round"] == shared[-1]["round"]] if shared else None
        self.trace, self.first = trajectory(self.spec, last)
        run.on_event(nev.NetworkPlanned(run.run_id, self.names, self.spec.rounds, self.stored))

    async def advance(self) -> bool:
        return self.stored <= self.spec.rounds

    async def step(self) -> None:
        t = self.stored
        rows = self._rows(t)
        await self.run_.recorder.record_step_rows(rows, self.partial, COLLECTION)
        self.partial = set()
        self.stored += 1
        self.run_.on_event(nev.NetworkRoundStored(self.run_.run_id, t, rows))

    def _rows(self, t: int) -> list[dict]:
        """Round t's rows; round 0 is the table's answers (thoughts included), as in an LLM run."""
        assert self.trace is not None
        run_id, names = self.run_.run_id, self.names
        graph = graph_for_round(self.graphs, t) if t else None
        rows = []
        for i, record in enumerate(self.spec.agents):
            if graph is None:
                answer, friends = round_zero(record.row()), []
            else:
                k = t - self.first
                opinion, decision = self.trace.scores[k][i], self.trace.decisions[k][i]
                answer = Answer("", int(opinion), bool(decision))
                friends = [names[j] for j in sorted(graph.adj[i])]
            row = round_row(run_id, names, t, i, answer, friends, [], False)
            exact = float(self.trace.opinions[t - self.first][i])
            row["exact_opinion"] = round(5.0 * (exact + 1.0), 6)
            rows.append(row)
        return rows

    def done_fields(self) -> dict:
        return {}
