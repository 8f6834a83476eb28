"""An opinion network's calls before it runs (services/estimate_parts.py): every agent's prompt
of every round, rendered by the run's own prompt code with each earlier answer standing in at
the model's expected reply length, on the run's own graphs.

Each round sends every agent one answer prompt (all at once: a round's wall time is one call),
and in a free-chat round sent as messages one message prompt first. Answers that do not parse
are asked again up to twice; the estimate counts first tries only. The theory answers without a
model (no calls). A memory stream shows its top k records and rates one record per answer seen
(memory/services/estimate.py).
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from simulator.domain.llm_choice import LLMChoice
from simulator.memory.services.estimate import stream_calls
from simulator.services.estimate_parts import CallTally, Shape
from simulator.services.experiments import ExperimentView
from simulator.worlds.network.domain.answers import Answer, round_zero
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.domain.graphs import graph_for_round
from simulator.worlds.network.engine.run import OpinionNetwork
from simulator.worlds.network.prompting.prompt import free_chat_messages


def _world(run: NetworkSpec) -> OpinionNetwork:
    """The run's rules with nothing to call or store: only its prompt code is used."""
    return OpinionNetwork(SimpleNamespace(spec=run, recorder=None, llms=None))  # type: ignore[arg-type]


def run_calls(view: ExperimentView, run: NetworkSpec, shape: Shape) -> list[CallTally]:
    if run.is_theory or run.llm is None:
        return []
    llm: LLMChoice = run.llm
    known = {llm.key: llm}
    reply = shape.placeholder(llm)
    world = _world(run)
    agents, names = world.agents, world.names
    answered = Answer(reply, 5, True)
    world.history = [[round_zero(agent) for agent in agents]]
    stream = run.memory.is_stream
    remembered = "\n".join(f"- {reply}" for _ in range(run.memory.top_k or 0)) if stream else None
    chats = set(run.settings.free_chat) if run.switches.free_chat_as == "message" else set()
    calls = tokens = serial = 0
    records: Counter[tuple[str, str]] = Counter()
    for t in range(1, run.rounds + 1):
        graph = graph_for_round(world.graphs, t)
        friends = [sorted(graph.adj[i]) for i in range(len(agents))]
        heard: list[dict[str, str] | None] = [None] * len(agents)
        if t in chats:
            for i, agent in enumerate(agents):
                others = [names[j] for j in friends[i] if j != i]
                asked = free_chat_messages(
                    run.scenario,
                    agent,
                    i,
                    t,
                    world._own(i),
                    others,
                    world._n_friends(friends[i]),
                    remembered,
                    run.switches.private_holders,
                )
                tokens += shape.tokens(llm, asked, known)
                heard[i] = dict.fromkeys(others, reply)
            calls, serial = calls + len(agents), serial + 1
        for i in range(len(agents)):
            asked = world._prompt(t, i, friends[i], heard[i], remembered)
            tokens += shape.tokens(llm, asked, known)
            if stream:
                for j in friends[i]:
                    records[(names[i], f"{names[j]}: {reply}")] += 1
        calls, serial = calls + len(agents), serial + 1
        world.history.append([answered] * len(agents))
    tallies = [CallTally.of(llm, calls, tokens, calls * shape.reply_tokens(llm), serial)]
    if stream:
        queries = Counter({reply: len(agents) * run.rounds})
        tallies += stream_calls(run.memory, llm, records, queries, run.rounds, shape, known)
    return tallies


def calls_at_least(run: NetworkSpec) -> bool:
    return not run.is_theory and run.memory.is_stream
