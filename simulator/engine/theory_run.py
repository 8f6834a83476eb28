"""The coevolution theory as a world of the step loop: the LLM run's twin, with no model.

A theory run (`llm-sim run EXP --theory`) has the same graph, agents table, scenario and
rounds as an LLM run and stores the same rows in `network_rounds`, so the measures and the
report read both alike. Round 0 is the table's answer (as in an LLM run); rounds 1, 2, ...
are the theory's state after each round of asynchronous updates (domain/network/theory.py,
which documents how the four coefficients map onto it), with `exact_opinion` beside the
whole-number `opinion`: the theory's opinion on the same 0..10 scale before rounding down.
The whole trajectory is computed from the stored seed before the first round is stored, so a
resumed run stores the very rounds the killed one would have.
"""

from __future__ import annotations

import math

from simulator.domain.network.answers import Answer, round_zero
from simulator.domain.network.graphs import graph_for_round
from simulator.domain.network.theory import TheoryRun, coevolve, from_agents
from simulator.domain.network_experiment import NetworkSpec
from simulator.engine import events as ev
from simulator.engine.network_run import (
    COLLECTION,
    NetworkRun,
    graphs_of,
    round_row,
    stored_history,
)
from simulator.engine.step_loop import StepRun, run_world


async def run_theory(run: NetworkRun) -> str:
    """Run (or resume) a theory run to the end; return its final status."""
    loop = StepRun(run.run_id, run.recorder, run.on_event, run.stop)
    return await run_world(loop, TheoryNetwork(run))


def trajectory(spec: NetworkSpec) -> TheoryRun:
    """The theory on the run's snapshots, agents and settings, from its seed."""
    start = from_agents([record.row() for record in spec.agents])
    theory = spec.settings.theory
    news = [
        theory.information[t] if t < len(theory.information) else None for t in range(spec.rounds)
    ]
    return coevolve(
        graphs_of(spec),
        start.opinions,
        start.actions,
        lam=start.lam,
        a=start.a,
        tau=start.tau,
        f=start.f,
        alpha=theory.alpha,
        mu=theory.mu,
        beta=math.inf if theory.rationality is None else theory.rationality,
        information=news,
        rounds=spec.rounds,
        updates_per_round=theory.updates_per_round,
        seed=spec.seed,
    )


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

    async def prepare(self) -> None:
        run, recorder = self.run_, self.run_.recorder
        rows = recorder.store.network_rounds.for_run(run.run_id)
        history, self.partial = stored_history(self.spec, rows)
        self.stored = len(history)
        recorder.counters["messages"] += sum(row["round"] < self.stored for row in rows)
        self.trace = trajectory(self.spec)
        run.on_event(ev.NetworkPlanned(run.run_id, self.names, self.spec.rounds, self.stored))

    async def advance(self) -> bool:
        return self.stored <= self.spec.rounds

    async def step(self) -> None:
        t = self.stored
        rows = self._rows(t)
        await self.run_.recorder.record_step_rows(rows, self.partial, COLLECTION)
        self.partial = set()
        self.stored += 1
        self.run_.on_event(ev.NetworkRoundStored(self.run_.run_id, t, rows))

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
                opinion, decision = self.trace.scores[t][i], self.trace.decisions[t][i]
                answer = Answer("", int(opinion), bool(decision))
                friends = [names[j] for j in sorted(graph.adj[i])]
            row = round_row(run_id, names, t, i, answer, friends, [], False)
            row["exact_opinion"] = round(5.0 * (float(self.trace.opinions[t][i]) + 1.0), 6)
            rows.append(row)
        return rows

    def done_fields(self) -> dict:
        return {}
