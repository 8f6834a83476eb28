"""The opinion network (LLM-SAM) as a world of the step loop: every agent answers each round.

Round 0 is the agents table's answer, stored without a call. In round t >= 1 every agent is
asked at once (engine/step_calls.py) with its friends' answers of round t-1; a reply that does
not parse is asked again with a new seed, up to three attempts, and when none parses the
agent keeps its previous answer: stored as `answer_fallback` and counted (`answer_fallbacks`),
never silently. A round's rows are stored when the round is complete; the calls are in the
ledger as they happen, so a killed run resumes from its last complete round and replays the
calls of the interrupted round that were already answered.

Free chat (`network.free_chat`): in each listed round every agent first writes one message to
its friends (one call each, all at once, purpose `persuade`; itself is not among them on a
self-loop); its answer prompt then shows its friends' messages by name. A message is one
attempt with no parsing: an empty one is stored as such and counted (`empty_chat_messages`).
The rows of such a round add `said` and `heard`. A run killed between the messages and the
answers replays the messages from the ledger, so the answer prompts come out the same.

Memory (`spec.memory`, engine/network_memory.py): what the prompts show of an agent's own past
(every earlier answer, none, or a memory stream's recall); with a stream each row of round
t >= 1 names the records its prompts showed (`retrieved`).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from simulator.domain.params import GenerationParams
from simulator.engine.gc_budget import fewer_collections
from simulator.engine.ports import Recorder
from simulator.engine.step_calls import REPLAYED, ActorCall, ActorCalls, replay_book
from simulator.engine.step_loop import RunContext, StepRun, run_world
from simulator.worlds.network.domain.answers import MAX_ATTEMPTS, Answer, parse_answer, round_zero
from simulator.worlds.network.domain.experiment import ANSWER_PURPOSES, NetworkSpec
from simulator.worlds.network.domain.graphs import graph_for_round, snapshot_graphs
from simulator.worlds.network.engine import events as nev
from simulator.worlds.network.engine.memory import Friends, NetworkMemory
from simulator.worlds.network.prompting.accumulated import accumulated_messages, friend_line
from simulator.worlds.network.prompting.prompt import free_chat_messages, network_messages

ANSWER_FALLBACKS = "answer_fallbacks"  # counter: agents whose replies never parsed in a round
EMPTY_CHAT = "empty_chat_messages"  # counter (free-chat runs): messages that were empty
PERSUADE = "persuade"  # the purpose of a free-chat message call
COLLECTION = "network_rounds"


@dataclass
class NetworkRun(RunContext):
    """Everything one network run needs (its context; the spec holds all its rules read)."""

    spec: NetworkSpec


async def run_network(run: NetworkRun) -> str:
    """Run (or resume) a network run to the end; return its final status."""
    loop = StepRun(run.run_id, run.recorder, run.on_event, run.stop)
    with fewer_collections():  # engine/gc_budget.py: full collections walk every agent
        return await run_world(loop, OpinionNetwork(run))


def graphs_of(spec: NetworkSpec) -> list[nx.Graph]:
    """The stored snapshots as graphs on the agents' indexes."""
    return snapshot_graphs(spec.snapshots, len(spec.agents))


def stored_rows(recorder: Recorder) -> list[dict]:
    """A fork's shared rows (read from its parent: rounds before its fork point), then the
    rows this run stored."""
    return recorder.load_rows(COLLECTION)


def stored_history(spec: NetworkSpec, rows: list[dict]) -> tuple[list[list[Answer]], set[str]]:
    """The answers of every complete stored round from round 0 on, and the ids already stored
    of the round after them (a kill between two inserts of one round leaves some)."""
    by_round: dict[int, list[dict]] = {}
    for row in rows:
        by_round.setdefault(row["round"], []).append(row)
    history: list[list[Answer]] = []
    n = len(spec.agents)
    while len(by_round.get(len(history), [])) == n:
        done = sorted(by_round[len(history)], key=lambda r: r["agent_index"])
        history.append([_answer(r) for r in done])
    return history, {r["_id"] for r in by_round.get(len(history), [])}


def round_row(
    run_id: str,
    names: list[str],
    t: int,
    i: int,
    answer: Answer,
    friends: list[str],
    replies: list[str],
    fallback: bool,
) -> dict:
    """Agent i's stored answer of round t (the theory's rows have the same shape)."""
    return {
        "conversation_id": run_id,
        "round": t,
        "agent": names[i],
        "agent_index": i,
        "opinion": answer.opinion,
        "decision": "Yes" if answer.decision else "No",
        "thought": answer.thought,
        "friends": friends,
        "replies": replies,
        "attempts": len(replies),
        "answer_fallback": fallback,
    }


def _empty_said(row: dict) -> bool:
    """A free-chat row whose agent's message was empty (rows of other rounds have no `said`)."""
    return "said" in row and not row["said"]


def _answer(row: dict) -> Answer:
    return Answer(row["thought"], row["opinion"], row["decision"] == "Yes")


class OpinionNetwork:
    """The world's rules: who hears whom is the round's graph; everyone answers each round."""

    def __init__(self, run: NetworkRun):
        self.run_ = run
        self.spec = run.spec
        self.names = run.spec.names
        self.agents = [record.row() for record in run.spec.agents]
        self.graphs = graphs_of(run.spec)
        self.history: list[list[Answer]] = []
        self.partial: set[str] = set()
        self.calls = ActorCalls(run.recorder, run.llms)
        self.memory = NetworkMemory(run.spec)
        self._adjacent: dict[int, list[list[int]]] = {}  # snapshot -> sorted friends per agent
        self._lines: dict[int, list[str]] = {}  # round s -> each agent's answer as a line

    def _friends_on(self, t: int) -> list[list[int]]:
        """Every agent's friends on round t's graph, sorted: read once per snapshot."""
        at = min(max(t - 1, 0), len(self.graphs) - 1)  # graph_for_round's choice
        if at not in self._adjacent:
            graph = graph_for_round(self.graphs, t)
            self._adjacent[at] = [sorted(graph.adj[i]) for i in range(len(self.agents))]
        return self._adjacent[at]

    def _answer_lines(self, s: int) -> list[str]:
        """Each agent's answer of round s - 1 as a friend's line of round s, rendered once
        for every agent who is shown it (a hub's answer is in hundreds of prompts)."""
        if s not in self._lines:
            if self.spec.switches.friends_rounds != "all":  # only the round asked is shown
                self._lines.clear()
            shown = zip(self.names, self.history[s - 1], strict=True)
            self._lines[s] = [friend_line(name, answer) for name, answer in shown]
        return self._lines[s]

    def _friends_texts(self, i: int, t: int, chat_rounds: set[int]) -> list[str]:
        """Agent i's `friends_texts` of round t (accumulated_messages): the rounds whose
        text is not shown are left empty instead of rendered."""
        every = self.spec.switches.friends_rounds == "all"
        texts = [""]
        for s in range(1, t + 1):
            if s < t and (not every or s in chat_rounds):
                texts.append("")
                continue
            lines = self._answer_lines(s)
            texts.append("\n".join([lines[j] for j in self._friends_on(s)[i]]))
        return texts

    async def prepare(self) -> None:
        run, recorder = self.run_, self.run_.recorder
        recorder.counters.setdefault(ANSWER_FALLBACKS, 0)
        recorder.counters.setdefault(REPLAYED, 0)
        if self.spec.settings.free_chat and self.spec.switches.free_chat_as == "message":
            recorder.counters.setdefault(EMPTY_CHAT, 0)
        calls = recorder.load_calls()
        rows = stored_rows(recorder)
        self.history, self.partial = stored_history(self.spec, rows)
        for row in rows:  # a fork's shared rows are its parent's work: not counted
            if row["round"] < len(self.history) and row["conversation_id"] == run.run_id:
                recorder.counters["messages"] += 1
                recorder.counters[ANSWER_FALLBACKS] += int(bool(row.get("answer_fallback")))
                if _empty_said(row):
                    recorder.counters[EMPTY_CHAT] += 1
        self.calls = ActorCalls(recorder, run.llms, replay_book(calls))
        self.memory = NetworkMemory.for_run(
            run.run_id, self.spec, recorder, run.embedder, recorder.counters
        )
        last = [r for r in rows if r["round"] == len(self.history) - 1]
        first = [round_zero(agent) for agent in self.agents]
        await self.memory.start(self.calls, self.history, first, last)
        run.on_event(
            nev.NetworkPlanned(run.run_id, self.names, self.spec.rounds, len(self.history))
        )

    async def advance(self) -> bool:
        return len(self.history) <= self.spec.rounds

    async def step(self) -> None:
        t = len(self.history)
        if t == 0:
            answers = [round_zero(agent) for agent in self.agents]
            rows = [
                round_row(self.run_.run_id, self.names, 0, i, a, [], [], False)
                for i, a in enumerate(answers)
            ]
            if self.memory.keeper is not None:  # a stream's rows all say what was recalled
                counts = self.memory.keeper.counts()  # after the seeds were rated
                for row in rows:
                    row["retrieved"], row["accessed"] = [], []
                    row["memory_counters"] = counts
        else:
            answers, rows = await self._round(t)
        recorder = self.run_.recorder
        await recorder.record_step_rows(rows, self.partial, COLLECTION)
        self.memory.release()  # after the rows: a cut round leaves no access marks behind
        self.partial = set()  # record_step_rows counted the rows as messages
        recorder.counters[ANSWER_FALLBACKS] += sum(bool(r["answer_fallback"]) for r in rows)
        if EMPTY_CHAT in recorder.counters:
            recorder.counters[EMPTY_CHAT] += sum(_empty_said(r) for r in rows)
        self.history.append(answers)
        self.run_.on_event(nev.NetworkRoundStored(self.run_.run_id, t, rows))

    async def _round(self, t: int) -> tuple[list[Answer], list[dict]]:
        previous = self.history[-1]
        friends = self._friends_on(t)
        others: list[Friends] = [
            [(self.names[j], previous[j]) for j in friends[i] if j != i]
            for i in range(len(self.agents))
        ]
        remembered, retrieved = await self.memory.recall(t, others)
        switches = self.spec.switches
        chat = t in self.spec.settings.free_chat and switches.free_chat_as == "message"
        said = await self._free_chat(t, friends, remembered) if chat else None
        heard = [
            None if said is None else {self.names[j]: said[j] for j in friends[i] if j != i}
            for i in range(len(self.agents))
        ]
        prompts = [
            self._prompt(t, i, friends[i], heard[i], remembered[i]) for i in range(len(self.agents))
        ]
        replies: list[list[str]] = [[] for _ in self.agents]
        answers: dict[int, Answer] = {}
        pending = list(range(len(self.agents)))
        for attempt in range(MAX_ATTEMPTS):
            calls = [self._call(t, i, attempt, prompts[i]) for i in pending]
            for i, reply in zip(pending, await self.calls.run(calls), strict=True):
                replies[i].append(reply.text)
                parsed = parse_answer(reply.text)
                if parsed is not None:
                    answers[i] = parsed
            pending = [i for i in pending if i not in answers]
            if not pending:
                break
        final = [answers.get(i, previous[i]) for i in range(len(self.agents))]
        fell_back = set(pending)
        await self.memory.perceive(self.calls, t, final, others, said, heard)
        rows = [
            round_row(
                self.run_.run_id,
                self.names,
                t,
                i,
                final[i],
                [self.names[j] for j in friends[i]],
                replies[i],
                i in fell_back,
            )
            for i in range(len(self.agents))
        ]
        if said is not None:
            for i, row in enumerate(rows):
                row["said"], row["heard"] = said[i], heard[i]
        if self.memory.keeper is not None:
            accessed, counts = self.memory.accessed(), self.memory.keeper.counts()
            for i, row in enumerate(rows):
                row["retrieved"], row["accessed"] = retrieved[i], accessed[i]
                row["memory_counters"] = counts
        return final, rows

    def _n_friends(self, friends: list[int]) -> int:
        """What fills {n_friends}: the group's size, or the agent's degree (self-loop counted)."""
        return len(self.agents) if self.spec.switches.n_friends == "group" else len(friends)

    def _own(self, i: int) -> list[Answer]:
        own = self.memory.own(self.history, i)
        return own[:1] if self.spec.switches.own_answers == "first" else own

    def _prompt(
        self,
        t: int,
        i: int,
        friends: list[int],
        heard: dict[str, str] | None,
        remembered: str | None,
    ) -> list[dict]:
        """Agent i's answer prompt of round t in the run's layout."""
        switches, agent = self.spec.switches, self.agents[i]
        if switches.layout == "accumulated":
            chat_rounds = set(self.spec.settings.free_chat)
            shown_as = chat_rounds if switches.free_chat_as == "opinion_round" else set()
            return accumulated_messages(
                self.spec.scenario,
                agent,
                i,
                t,
                switches,
                self._n_friends(friends),
                [answers[i] for answers in self.history[:t]],
                self._friends_texts(i, t, shown_as),
                shown_as,
            )
        previous = self.history[-1]
        return network_messages(
            self.spec.scenario,
            agent,
            i,
            t,
            self._own(i),
            [(self.names[j], previous[j]) for j in friends],
            heard,
            remembered,
            self._n_friends(friends),
            switches.private_holders,
        )

    async def _free_chat(
        self, t: int, friends: list[list[int]], remembered: list[str | None]
    ) -> list[str]:
        """Every agent's message to its friends before round t's answers (one try each)."""
        calls = []
        for i, agent in enumerate(self.agents):
            messages = free_chat_messages(
                self.spec.scenario,
                agent,
                i,
                t,
                self._own(i),
                [self.names[j] for j in friends[i] if j != i],
                self._n_friends(friends[i]),
                remembered[i],
                self.spec.switches.private_holders,
            )
            calls.append(
                ActorCall(
                    PERSUADE,
                    t,
                    i,
                    self.names[i],
                    self.spec.llm,
                    messages,
                    self._message_params(t, i),
                    f"{self.names[i]}'s message to its friends in round {t}",
                )
            )
        return [reply.text.strip() for reply in await self.calls.run(calls)]

    def _call(self, t: int, i: int, attempt: int, messages: list[dict]) -> ActorCall:
        purpose = ANSWER_PURPOSES[attempt]
        return ActorCall(
            purpose,
            t,
            i,
            self.names[i],
            self.spec.llm,
            messages,
            self._params(t, i, attempt),
            f"{self.names[i]}'s answer in round {t} (attempt {attempt + 1})",
        )

    def _params(self, t: int, i: int, attempt: int) -> GenerationParams:
        """The run's seed, offset per call (round, agent, attempt): a retry has a new seed."""
        params = self.spec.llm.params
        if self.spec.seed is None:
            return params
        offset = ((t - 1) * len(self.agents) + i) * MAX_ATTEMPTS + attempt
        return params.merge(GenerationParams(seed=(self.spec.seed + offset) % 2**32))

    def _message_params(self, t: int, i: int) -> GenerationParams:
        """A free-chat message's seed: offsets after every answer attempt's of the run, so no
        message shares a seed with an answer (and the answers keep theirs)."""
        params = self.spec.llm.params
        if self.spec.seed is None:
            return params
        answers = self.spec.rounds * len(self.agents) * MAX_ATTEMPTS
        offset = answers + (t - 1) * len(self.agents) + i
        return params.merge(GenerationParams(seed=(self.spec.seed + offset) % 2**32))

    def done_fields(self) -> dict:
        return {}
