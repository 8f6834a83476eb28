"""The group chat as a world of the step loop: one speaker per step, everyone hears everything.

Its rules are the speaker strategy (who acts), the day's transcript (what the actor sees) and
the bleed trim (how a reply becomes a message, with one retry on an empty reply). Its memory
(`spec.memory.kind`): `summary`, the day summaries, written when a day's turns are done and read
by every later day's opening; `stream`, a memory stream beside them (engine/chat_memory.py);
`none`, each day opens with the starting message alone (the summaries are still written, for
the researcher, and never shown to an agent).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from simulator.domain.fork import EDIT_PURPOSE, ForkEdit
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.llm_display import llm_name
from simulator.domain.params import GenerationParams
from simulator.engine import events as ev
from simulator.engine.ports import Recorder
from simulator.engine.step_calls import ActorCall, ActorCalls, replay_book
from simulator.engine.step_loop import StepFailed, StepRun, run_world
from simulator.llm.access import LLMAccess
from simulator.llm.embeddings import Embedder
from simulator.memory.engine.keeper import MemoryKeeper
from simulator.prompting.bleed import Trimmed, trim_reply
from simulator.prompting.echoes import clean_echoes
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.domain.variants import apply_variants
from simulator.worlds.chat.engine.agents import Agent, build_agents
from simulator.worlds.chat.engine.manager import ManagerPicks
from simulator.worlds.chat.engine.memory import ChatMemory, Recalled, turn_query
from simulator.worlds.chat.engine.progress import ChatProgress
from simulator.worlds.chat.engine.speakers import (
    InputFunction,
    ManualChoice,
    RandomNoRepeat,
    RoleAlternating,
    RoundRobin,
    SpeakerSelector,
    TurnState,
)
from simulator.worlds.chat.prompting.assembly import (
    agent_system_prompt,
    starting_message,
    summarizer_system_prompt,
)
from simulator.worlds.chat.prompting.transcript import (
    Line,
    agent_messages,
    day_opening,
    summarizer_messages,
    with_memories,
)

log = logging.getLogger(__name__)


@dataclass
class ConversationRun:
    """Everything one run needs; the store, backends and input arrive from outside."""

    conversation_id: str
    experiment: Experiment
    spec: ConversationSpec
    llms: LLMAccess
    recorder: Recorder
    on_event: Callable[[ev.Event], None] = lambda event: None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    manual_input: InputFunction | None = None
    embedder: Embedder | None = None  # a memory stream's (spec.memory.kind == "stream")
    edit: ForkEdit | None = None  # a fork's: the researcher's message at the fork point


ConversationFailed = StepFailed  # the name older callers catch


async def run_conversation(run: ConversationRun) -> str:
    """Run (or resume) a conversation to the end; return its final status."""
    world = ChatWorld(run)  # a manual speaker without an input function fails here, unmarked
    loop = StepRun(run.conversation_id, run.recorder, run.on_event, run.stop)
    return await run_world(loop, world)


class ChatWorld:
    """Days of turns: the loop's step is one turn; a finished day is closed by its summary."""

    def __init__(self, run: ConversationRun):
        if run.spec.variant:
            run.experiment = apply_variants(run.experiment, run.spec.variant)
        self.run_ = run
        self.spec = run.spec
        self.agents = build_agents(run.experiment, run.spec)
        self.by_name = {a.name: a for a in self.agents}
        counts = run.spec.agents
        named = run.spec.agents_know_their_names  # False only for conversations from before
        self.prompts = {  # per agent: each is told its own name
            a.name: agent_system_prompt(run.experiment, a.role, counts, a.name if named else None)
            for a in self.agents
        }
        self.start = starting_message(run.experiment, counts)
        self.summarizer_prompt = (
            summarizer_system_prompt(run.experiment, counts)
            if run.experiment.summarizer_sections
            else None
        )
        self.summaries: list[str] = []
        self.selector = self._selector()
        self.split = run.spec.day_turns  # agent turns per day, under the spec's counting
        self.calls = ActorCalls(run.recorder, run.llms)
        self.progress = ChatProgress()
        self.day = 0  # the day in progress; days + 1 once all are done
        self.opening = ""
        self.lines: list[Line] = []
        self.turn = 0  # agent turns stored so far, across days (the seed's offset)
        self.previous: str | None = None
        self.memory: ChatMemory | None = None

    def _selector(self) -> SpeakerSelector:
        method = self.spec.speaker_method
        if method == "round_robin":
            return RoundRobin()
        if method == "random":
            return RandomNoRepeat(self.spec.seed)
        if method == "role_alternating":
            return RoleAlternating()
        if method == "manual":
            if self.run_.manual_input is None:
                raise ValueError("speaker method 'manual' needs an input function")
            return ManualChoice(self.run_.manual_input)
        choice = self.spec.manager_llm
        assert choice is not None
        backend = self.run_.llms.get(choice)
        backend_url = backend.base_url
        return ManagerPicks(
            backend,
            choice,
            opening=self._opening,
            record=lambda purpose, day, index, messages, params: self.run_.recorder.call_recorder(
                purpose, day, index, None, choice, messages, params, backend_url
            ),
        )

    async def prepare(self) -> None:
        run = self.run_
        progress = ChatProgress.of(run.recorder.load_progress(), run.conversation_id)
        self.progress = progress
        self.summaries = list(progress.summaries)
        self.turn = progress.messages
        self.previous = progress.last_speaker
        self.calls = ActorCalls(run.recorder, run.llms, replay_book(progress.calls))
        if self.spec.memory.is_stream:
            self.memory = self._stream(progress)
        run.on_event(
            ev.DaysPlanned(
                run.conversation_id,
                self.split,
                [(a.name, a.role, llm_name(a.llm)) for a in self.agents],
            )
        )

    async def advance(self) -> bool:
        if self.day == 0:
            self._open_day(1)
        while self.day <= self.spec.days and len(self.lines) >= self.split[self.day - 1]:
            if len(self.summaries) < self.day:
                await self._summarise(self.day, self.opening, self.lines)
            self._open_day(self.day + 1)
        return self.day <= self.spec.days

    def _open_day(self, day: int) -> None:
        self.day = day
        if day > self.spec.days:
            return
        self.opening = self._opening(day)
        self.lines = list(self.progress.lines_by_day.get(day, []))
        self.run_.on_event(ev.DayStarted(self.run_.conversation_id, day, self.opening))

    async def step(self) -> None:
        day, lines = self.day, self.lines
        edit = self.run_.edit
        if edit is not None and (day, len(lines)) == (edit.day, edit.index):
            await self._edited_turn(edit)
            return
        state = TurnState(
            self.agents,
            self.turn,
            day,
            self.previous,
            [(line.speaker, line.text) for line in lines],
            allow_repeat=self.spec.allow_repeat_speaker,
        )
        pick = await self.selector.next_speaker(state)
        agent = self.by_name[pick.name]
        self.run_.on_event(ev.TurnStarted(self.run_.conversation_id, day, len(lines), agent.name))
        text = await self._agent_turn(agent, day, len(lines), self.turn, self.opening, lines, pick)
        lines.append(Line(agent.name, text))
        self.previous = agent.name
        self.turn += 1

    async def _edited_turn(self, edit: ForkEdit) -> None:
        """A fork's first turn when the researcher wrote it: stored as the agent's message,
        marked as edited, with a ledger row in place of a model call."""
        run, agent = self.run_, self.by_name[edit.speaker]
        in_ledger = any(
            c.get("purpose") == EDIT_PURPOSE and (c["day"], c["index"]) == (edit.day, edit.index)
            for c in self.progress.calls
        )
        doc = edit.message(self.turn)
        run.on_event(ev.TurnStarted(run.conversation_id, edit.day, edit.index, agent.name))
        await run.recorder.record_edit(edit, doc, in_ledger)
        run.on_event(
            ev.MessageStored(
                run.conversation_id,
                edit.day,
                edit.index,
                agent.name,
                agent.role,
                edit.text,
                False,
                False,
                False,
                None,
            )
        )
        self.lines.append(Line(agent.name, edit.text))
        self.previous = agent.name
        self.turn += 1

    def _opening(self, day: int) -> str:
        """The day's opening: the starting message, and the earlier days' summaries unless the
        memory is `none` or a stream instead of them (`day_summaries: false`)."""
        memory = self.spec.memory
        hidden = memory.kind == "none" or memory.day_summaries is False
        shown = [] if hidden else self.summaries[: day - 1]
        return day_opening(self.start, shown)

    def _stream(self, progress: ChatProgress) -> ChatMemory:
        """The agents' memory streams, loaded as of the stored turns."""
        run = self.run_
        assert run.embedder is not None, "a memory stream needs an embedder"
        keeper = MemoryKeeper(
            run.conversation_id,
            [a.name for a in self.agents],
            self.spec.memory,
            run.recorder,
            run.embedder,
            self.spec.summarizer_llm or self.agents[0].llm,  # the model that writes memories
            run.recorder.counters,
            self.spec.seed,
        )
        memory = ChatMemory(keeper)
        memory.load(progress.messages, progress.last_own)
        return memory

    def done_fields(self) -> dict:
        return {"summaries": self.summaries}  # a resumed run's stored list may lag

    def _without_echoes(self, trimmed: Trimmed, system_prompt: str) -> Trimmed:
        """`speakers_echoes` cleaning: instructions recited and invented day headers out."""
        names = [a.name for a in self.agents]
        roles = [r.name for r in self.run_.experiment.roles]
        cleaned = clean_echoes(trimmed.text, names, roles, system_prompt)
        if not cleaned.changed:
            return trimmed
        return Trimmed(cleaned.text, True, trimmed.cut_at, trimmed.cut_label)

    def _cleaned(self, raw: str, agent: Agent, others: list[str], roles: list[str]) -> Trimmed:
        """The reply's clean text: `none` keeps it whole (stripped, as the reference did)."""
        if self.spec.reply_cleaning == "none":
            return Trimmed(raw.strip(), trimmed=False)
        return trim_reply(raw, agent.name, agent.role, others, roles)

    def _params(self, choice: LLMChoice, turn: int) -> GenerationParams:
        """The conversation seed, offset per call, wraps into the 32-bit seeds backends take."""
        if self.spec.seed is None:
            return choice.params
        return choice.params.merge(GenerationParams(seed=(self.spec.seed + turn) % 2**32))

    async def _agent_turn(
        self, agent: Agent, day: int, index: int, turn: int, opening: str, lines: list[Line], pick
    ) -> str:
        run = self.run_
        system, recalled = self.prompts[agent.name], None
        if self.memory is not None:  # the keeper's step: the turn's number from 1
            speaker = self.agents.index(agent)
            query = turn_query(opening, lines)
            recalled = await self.memory.recall(speaker, turn + 1, query)
            system = with_memories(system, recalled.texts)
        messages = agent_messages(system, opening, lines, agent.name, self.spec.speaker_format)
        params = self._params(agent.llm, turn)
        others = [a.name for a in self.agents if a.name != agent.name]
        other_roles = [r.name for r in run.experiment.roles if r.name != agent.role]
        reply = trimmed = None
        for purpose in ("agent_turn", "agent_turn_retry_empty"):
            call = ActorCall(
                purpose,
                day,
                index,
                agent.name,
                agent.llm,
                messages,
                params,
                f"{agent.name}'s turn (day {day}, message {index + 1})",
            )
            reply = await self.calls.one(call)
            trimmed = self._cleaned(reply.text, agent, others, other_roles)
            if self.spec.reply_cleaning == "speakers_echoes":
                trimmed = self._without_echoes(trimmed, self.prompts[agent.name])
            if trimmed.text:
                break
        assert reply is not None and trimmed is not None
        doc = {
            "day": day,
            "index": index,
            "seq": turn,
            "speaker": agent.name,
            "role": agent.role,
            "text": trimmed.text,
            "raw_text": reply.text,
            "trimmed": trimmed.trimmed,
            "cut_at": trimmed.cut_at,
            "cut_label": trimmed.cut_label,
            "empty": not trimmed.text,
            "speaker_fallback": pick.fallback,
            "speaker_notes": list(pick.notes),
            "model": agent.llm.model,
            "llm_label": agent.llm.key,
            "latency_s": round(reply.latency_s, 4),
            "tokens_in": reply.tokens_in,
            "tokens_out": reply.tokens_out,
            **(await self._remember(agent, turn, trimmed.text, recalled)),
        }
        await run.recorder.record_message(doc)
        if self.memory is not None:
            self.memory.stored(turn + 1)
        run.on_event(
            ev.MessageStored(
                run.conversation_id,
                day,
                index,
                agent.name,
                agent.role,
                trimmed.text,
                trimmed.trimmed,
                not trimmed.text,
                pick.fallback,
                reply.tokens_out,
            )
        )
        return trimmed.text

    async def _remember(
        self, agent: Agent, turn: int, text: str, recalled: Recalled | None
    ) -> dict:
        """A stream's records of the message, made before it is stored; the message's fields
        naming what its prompt showed and what the turn accessed."""
        if self.memory is None or recalled is None:
            return {}
        await self.memory.observe(self.calls, turn + 1, self.agents.index(agent), text)
        return {
            "retrieved": recalled.ids,
            "accessed": self.memory.accessed(),
            "memory_counters": self.memory.keeper.counts(),
        }

    async def _summarise(self, day: int, opening: str, lines: list[Line]) -> None:
        run = self.run_
        choice = self.spec.summarizer_llm or self.agents[0].llm
        messages = summarizer_messages(self.summarizer_prompt, day, opening, lines)
        params = self._params(choice, 10_000 + day)
        call = ActorCall(
            "summary", day, len(lines), None, choice, messages, params, f"the summary of day {day}"
        )
        reply = await self.calls.one(call)
        text = reply.text.strip()
        if self.spec.reply_cleaning == "speakers_echoes":
            text = self._without_echoes(Trimmed(text, False), self.summarizer_prompt or "").text
        self.summaries.append(text)
        await run.recorder.record_summary(day, text, reply.text, choice.model, self.summaries)
        run.on_event(ev.DaySummarised(run.conversation_id, day, text))
