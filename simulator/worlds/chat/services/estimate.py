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

from typing import Any

from simulator.domain.llm_choice import LLMChoice
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
    Line,
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
    known = {a.llm.key: a.llm for a in agents} | {summarizer.key: summarizer}
    memory = run.memory
    stream = memory.is_stream
    hidden = memory.kind == "none" or memory.day_summaries is False
    top_k = memory.top_k or 0
    tally = _Tally()
    summaries: list[str] = []
    records: list[tuple[str, str]] = []
    queries: list[str] = []
    made: dict[str, int] = {a.name: 0 for a in agents}  # records in each agent's stream
    turn = 0
    previous: str | None = None
    for day, turns in enumerate(run.day_turns, start=1):
        opening = day_opening(start, [] if hidden else summaries)
        lines: list[Line] = []
        for _ in range(turns):
            state = TurnState(
                agents, turn, day, previous, [(x.speaker, x.text) for x in lines],
                allow_repeat=run.allow_repeat_speaker,
            )  # fmt: skip
            agent = _speaker(run, agents, state)
            if run.speaker_method == "auto" and run.manager_llm is not None:
                manager = run.manager_llm
                known.setdefault(manager.key, manager)
                asked = manager_messages([(a.name, a.role) for a in agents], opening, lines)
                tally.add(manager, shape.tokens(manager, asked, known), shape.reply_tokens(manager))
            system = prompts[agent.name]
            if stream:
                recalled = min(top_k, made[agent.name])
                system = with_memories(system, [shape.placeholder(agent.llm)] * recalled)
                last = lines[-1] if lines else None
                queries.append(f"{last.speaker}: {last.text}" if last else opening)
            messages = agent_messages(system, opening, lines, agent.name, run.speaker_format)
            tally.add(
                agent.llm, shape.tokens(agent.llm, messages, known), shape.reply_tokens(agent.llm)
            )
            text = shape.placeholder(agent.llm)
            lines.append(Line(agent.name, text))
            if stream:
                for other in agents:
                    said = f"I said: {text}" if other is agent else f"{agent.name} said: {text}"
                    records.append((other.name, said))
                    made[other.name] += 1
            previous = agent.name
            turn += 1
        asked = summarizer_messages(summary_prompt, day, opening, lines)
        tally.add(
            summarizer, shape.tokens(summarizer, asked, known), shape.reply_tokens(summarizer)
        )
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
