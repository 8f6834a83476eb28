"""A group chat's calls before it runs (services/estimate_parts.py): every prompt the run will
send, rendered by the same functions the run uses, with each reply standing in at its model's
expected reply length.

Turn k of a day sends the system prompt, the day's opening and the k-1 messages before it, so a
day's prompt tokens grow with the square of its turns; each day ends with one summary call over
the day's transcript, and the next day's opening carries the summaries. Speakers follow the
run's own strategy where it is fixed by the turn (round robin, role alternating, random with a
seed); a manager's picks (auto) and manual picks are estimated as round robin, with one manager
call per turn. A memory stream adds its recalled records to the speaker's prompt and one rating
per record (memory/services/estimate.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from simulator.domain.llm_choice import LLMChoice
from simulator.llm.token_count import TokenCounter
from simulator.memory.services.estimate import stream_calls
from simulator.services.estimate_parts import CallTally, Shape
from simulator.services.experiments import ExperimentView
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.domain.sweep import SweepSpec
from simulator.worlds.chat.domain.variants import apply_variants
from simulator.worlds.chat.engine.agents import Agent, build_agents
from simulator.worlds.chat.engine.speakers import RandomNoRepeat, RoleAlternating, TurnState
from simulator.worlds.chat.prompting.assembly import (
    agent_system_prompt,
    starting_message,
    summarizer_system_prompt,
)
from simulator.worlds.chat.prompting.transcript import (
    RESEARCHER,
    agent_messages,
    day_opening,
    manager_messages,
    summarizer_messages,
    with_memories,
)
from simulator.worlds.chat.services.sweep_documents import conversation_spec


class _Tally:
    """Calls, tokens in and out per LLM entry, as the run is walked through."""

    def __init__(self) -> None:
        self.rows: dict[str, list[Any]] = {}  # key -> [choice, calls, in, out]

    def add(self, choice: LLMChoice, tokens_in: int, tokens_out: int) -> None:
        row = self.rows.setdefault(choice.key, [choice, 0, 0, 0])
        row[1] += 1
        row[2] += tokens_in
        row[3] += tokens_out

    def tallies(self) -> list[CallTally]:  # a chat's calls wait for each other
        return [CallTally.of(c, n, i, o, n) for c, n, i, o in self.rows.values()]


def _speaker(spec: ConversationSpec, agents: list[Agent], state: TurnState) -> Agent:
    """The turn's speaker: the run's strategy where it is fixed by the turn, else round robin."""
    if spec.speaker_method == "round_robin":
        return agents[state.turn % len(agents)]
    if spec.speaker_method == "random":
        picker: Any = RandomNoRepeat(spec.seed)
    elif spec.speaker_method == "role_alternating":
        picker = RoleAlternating()
    else:
        return agents[state.turn % len(agents)]
    coroutine = picker.next_speaker(state)  # these never wait: run it to its end here
    try:
        coroutine.send(None)
    except StopIteration as done:
        name = done.value.name
        return next(a for a in agents if a.name == name)
    raise AssertionError("a fixed speaker strategy awaited")


class _Day:
    """One day's prompts, kept as running sums so a turn costs the same however long the day
    is (a chat of 100,000 turns is sized in a moment): the prompt of turn k is the empty day's
    prompt plus the k-1 lines, each line its speaker's name (where the format shows it) and a
    reply, plus the chat template's tokens per message."""

    def __init__(self, run: Any, shape: Shape, known: dict[str, LLMChoice]) -> None:
        self.run, self.shape, self.known = run, shape, known
        self.named: dict[str, int] = {}  # counter name -> the day's lines as others read them
        self.bare = 0  # the day's lines as replies only (name_field; the speaker's own)
        self.own_named: dict[str, int] = {}  # agent -> its own lines with its name
        self.own_bare: dict[str, int] = {}  # agent -> its own lines as replies
        self.own_runs: dict[str, int] = {}  # agent -> runs of its consecutive lines
        self.lines = 0
        self.last: str | None = None
        self.last_agent: Agent | None = None
        self._prefix: dict[tuple[str, str], int] = {}

    def prefix(self, counter: TokenCounter, name: str) -> int:
        """The tokens of `Name: ` before a line, as `counter` counts them."""
        key = (counter.name, name)
        if key not in self._prefix:
            self._prefix[key] = counter.count(f"{name}: ")
        return self._prefix[key]

    def add(self, agent: Agent, counters: dict[str, TokenCounter]) -> None:
        reply = self.shape.reply_tokens(agent.llm)
        for name, counter in counters.items():
            self.named[name] = self.named.get(name, 0) + self.prefix(counter, agent.name) + reply
        mine = self.shape.counter(agent.llm)
        own = self.prefix(mine, agent.name) + reply
        self.own_named[agent.name] = self.own_named.get(agent.name, 0) + own
        self.own_bare[agent.name] = self.own_bare.get(agent.name, 0) + reply
        self.bare += reply
        if self.last != agent.name:
            self.own_runs[agent.name] = self.own_runs.get(agent.name, 0) + 1
        self.last = agent.name
        self.lines += 1
        self.last_agent = agent

    def agent_prompt(self, agent: Agent, empty_prompt: int) -> int:
        """Tokens of `agent`'s prompt now (prompting/transcript.agent_messages, summed)."""
        counter = self.shape.counter(agent.llm)
        own = self.own_bare.get(agent.name, 0)
        if self.run.speaker_format == "name_field":  # every line its own message, no names
            return empty_prompt + self.bare + self.lines * counter.per_message
        others = self.named.get(counter.name, 0) - self.own_named.get(agent.name, 0)
        # the lines are runs of user and assistant messages: each run of the agent's own lines
        # is one assistant message and the others' lines after it one more user message (when
        # the agent spoke last, "it is your turn again" is that user message)
        runs = self.own_runs.get(agent.name, 0)
        total = empty_prompt + others + own + 2 * runs * counter.per_message
        if self.last == agent.name:
            total += counter.count(f"{RESEARCHER}: {agent.name}, it is your turn again.")
        return total

    def transcript(self, choice: LLMChoice) -> int:
        """Tokens of the day's lines in a transcript (`Name: text` per line)."""
        return self.named.get(self.shape.counter(choice).name, 0)


def run_calls(view: ExperimentView, run: ConversationSpec, shape: Shape) -> list[CallTally]:
    experiment = apply_variants(view.experiment, run.variant) if run.variant else view.experiment
    agents = build_agents(experiment, run)
    counts = run.agents
    named = run.agents_know_their_names
    prompts = {
        a.name: agent_system_prompt(experiment, a.role, counts, a.name if named else None)
        for a in agents
    }
    start = starting_message(experiment, counts)
    summary_prompt = (
        summarizer_system_prompt(experiment, counts) if experiment.summarizer_sections else None
    )
    summarizer = run.summarizer_llm or agents[0].llm
    manager = run.manager_llm if run.speaker_method == "auto" else None
    known = {a.llm.key: a.llm for a in agents} | {summarizer.key: summarizer}
    if manager is not None:
        known[manager.key] = manager
    counters = {c.name: c for c in (shape.counter(choice) for choice in known.values())}
    memory = run.memory
    stream = memory.is_stream
    hidden = memory.kind == "none" or memory.day_summaries is False
    top_k = memory.top_k or 0
    tally = _Tally()
    summaries: list[str] = []
    records: Counter[tuple[str, str]] = Counter()
    queries: Counter[str] = Counter()
    made: dict[str, int] = {a.name: 0 for a in agents}  # records in each agent's stream
    recalled_cost: dict[tuple[str, int], int] = {}
    turn = 0
    previous: str | None = None
    for day, turns in enumerate(run.day_turns, start=1):
        opening = day_opening(start, [] if hidden else summaries)
        fmt = run.speaker_format
        empty = {
            a.name: shape.tokens(
                a.llm, agent_messages(prompts[a.name], opening, [], a.name, fmt), known
            )
            for a in agents
        }
        rosters: dict[tuple, int] = {}  # the manager's empty-day prompt per eligible set
        today = _Day(run, shape, known)
        for _ in range(turns):
            barred = [(previous, "")] if previous is not None and today.lines else []
            state = TurnState(agents, turn, day, previous, barred, run.allow_repeat_speaker)
            agent = _speaker(run, agents, state)
            if manager is not None:  # it is shown the agents who may speak now
                eligible = [(a.name, a.role) for a in state.eligible]
                key = tuple(eligible)
                if key not in rosters:
                    asked = manager_messages(eligible, opening, [])
                    rosters[key] = shape.tokens(manager, asked, known)
                tokens = rosters[key] + today.transcript(manager)
                tally.add(manager, tokens, shape.reply_tokens(manager))
            tokens = today.agent_prompt(agent, empty[agent.name])
            if stream:
                recalled = min(top_k, made[agent.name])
                key = (agent.name, recalled)
                if key not in recalled_cost:
                    shown = with_memories(
                        prompts[agent.name], [shape.placeholder(agent.llm)] * recalled
                    )
                    recalled_cost[key] = shape.tokens(agent.llm, [{"content": shown}], known) - (
                        shape.tokens(agent.llm, [{"content": prompts[agent.name]}], known)
                    )
                tokens += recalled_cost[key]
                last = today.last_agent
                queries[f"{last.name}: {shape.placeholder(last.llm)}" if last else opening] += 1
            tally.add(agent.llm, tokens, shape.reply_tokens(agent.llm))
            today.add(agent, counters)
            if stream:
                text = shape.placeholder(agent.llm)
                for other in agents:
                    said = f"I said: {text}" if other is agent else f"{agent.name} said: {text}"
                    records[(other.name, said)] += 1
                    made[other.name] += 1
            previous = agent.name
            turn += 1
        asked = summarizer_messages(summary_prompt, day, opening, [])
        tokens = shape.tokens(summarizer, asked, known) + today.transcript(summarizer)
        tally.add(summarizer, tokens, shape.reply_tokens(summarizer))
        summaries.append(shape.placeholder(summarizer))
    streamed = stream_calls(memory, summarizer, records, queries, turn, shape, known)
    return tally.tallies() + streamed


def calls_at_least(run: ConversationSpec) -> bool:
    return run.memory.is_stream  # reflections depend on the ratings


def sweep_run(view: ExperimentView, spec: SweepSpec, planned: Any) -> ConversationSpec | None:
    """The conversation spec of a planned conversation; None for a fork sweep, whose branches
    continue a stored chat (no estimate is made for them)."""
    if spec.fork is not None:
        return None
    return conversation_spec(view, spec, planned)
