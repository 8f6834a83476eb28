"""The conversation loop: days × turns, each turn a backend call recorded as it happens."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from simulator.domain.conversation import ConversationSpec
from simulator.domain.experiment import Experiment, LLMChoice
from simulator.domain.params import GenerationParams
from simulator.domain.variants import apply_variants
from simulator.engine import events as ev
from simulator.engine.agents import Agent, build_agents
from simulator.engine.manager import ManagerPicks
from simulator.engine.recorder import StoreRecorder, TranscriptTaken
from simulator.engine.speakers import (
    InputFunction,
    ManualChoice,
    RandomNoRepeat,
    RoleAlternating,
    RoundRobin,
    SpeakerSelector,
    TurnState,
)
from simulator.llm.access import LLMAccess
from simulator.llm.base import BackendError
from simulator.prompting.assembly import (
    agent_system_prompt,
    starting_message,
    summarizer_system_prompt,
)
from simulator.prompting.bleed import trim_reply
from simulator.prompting.transcript import Line, agent_messages, day_opening, summarizer_messages

log = logging.getLogger(__name__)


@dataclass
class ConversationRun:
    """Everything one run needs; the store, backends and input arrive from outside."""

    conversation_id: str
    experiment: Experiment
    spec: ConversationSpec
    llms: LLMAccess
    recorder: StoreRecorder
    on_event: Callable[[ev.Event], None] = lambda event: None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    manual_input: InputFunction | None = None


def llm_name(choice: LLMChoice) -> str:
    """How displays name an LLM entry: its model, and its label when it has one."""
    return f"{choice.model} as {choice.label}" if choice.label else choice.model


class ConversationFailed(Exception):
    """A turn failed after every retry; the conversation is marked failed with this message."""


async def run_conversation(run: ConversationRun) -> str:
    """Run (or resume) a conversation to the end; return its final status."""
    runner = _Runner(run)
    try:
        return await runner.run()
    except ConversationFailed as exc:
        run.recorder.mark("failed", str(exc))
        run.on_event(
            ev.ConversationFinished(run.conversation_id, "failed", str(exc), run.recorder.counters)
        )
        return "failed"
    except (asyncio.CancelledError, KeyboardInterrupt):
        run.recorder.mark("interrupted", "stopped by the user")
        run.on_event(
            ev.ConversationFinished(run.conversation_id, "interrupted", None, run.recorder.counters)
        )
        raise
    except TranscriptTaken:
        raise  # another worker owns the conversation now: nothing of ours to write
    except Exception as exc:
        # never leave a conversation `running` behind an unexpected error
        run.recorder.mark("failed", f"unexpected error: {type(exc).__name__}: {exc}")
        raise


class _Runner:
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
            opening=lambda day: day_opening(self.start, self.summaries[: day - 1]),
            record=lambda purpose, day, index, messages, params: self.run_.recorder.call_recorder(
                purpose, day, index, None, choice, messages, params, backend_url
            ),
        )

    async def run(self) -> str:
        run, recorder = self.run_, self.run_.recorder
        progress = recorder.load_progress()
        self.summaries = list(progress.summaries)
        split = self.spec.day_turns  # agent turns per day, under the spec's counting
        run.on_event(
            ev.DaysPlanned(
                run.conversation_id,
                split,
                [(a.name, a.role, llm_name(a.llm)) for a in self.agents],
            )
        )
        recorder.mark("running")
        turn = progress.messages
        previous = progress.last_speaker
        for day in range(1, self.spec.days + 1):
            opening = day_opening(self.start, self.summaries[: day - 1])
            lines = list(progress.lines_by_day.get(day, []))
            run.on_event(ev.DayStarted(run.conversation_id, day, opening))
            while len(lines) < split[day - 1]:
                if run.stop.is_set():
                    recorder.mark("interrupted", "stopped by the user")
                    run.on_event(
                        ev.ConversationFinished(
                            run.conversation_id, "interrupted", None, recorder.counters
                        )
                    )
                    return "interrupted"
                state = TurnState(
                    self.agents,
                    turn,
                    day,
                    previous,
                    [(line.speaker, line.text) for line in lines],
                    allow_repeat=self.spec.allow_repeat_speaker,
                )
                pick = await self.selector.next_speaker(state)
                agent = self.by_name[pick.name]
                run.on_event(ev.TurnStarted(run.conversation_id, day, len(lines), agent.name))
                text = await self._agent_turn(agent, day, len(lines), turn, opening, lines, pick)
                lines.append(Line(agent.name, text))
                previous = agent.name
                turn += 1
            if len(self.summaries) < day:
                await self._summarise(day, opening, lines)
        recorder.mark("done", summaries=self.summaries)  # a resumed run's list may lag
        run.on_event(ev.ConversationFinished(run.conversation_id, "done", None, recorder.counters))
        return "done"

    def _params(self, choice: LLMChoice, turn: int) -> GenerationParams:
        """The conversation seed, offset per call, wraps into the 32-bit seeds backends take."""
        if self.spec.seed is None:
            return choice.params
        return choice.params.merge(GenerationParams(seed=(self.spec.seed + turn) % 2**32))

    async def _agent_turn(
        self, agent: Agent, day: int, index: int, turn: int, opening: str, lines: list[Line], pick
    ) -> str:
        run = self.run_
        messages = agent_messages(self.prompts[agent.name], opening, lines, agent.name)
        params = self._params(agent.llm, turn)
        backend = run.llms.get(agent.llm)
        others = [a.name for a in self.agents if a.name != agent.name]
        other_roles = [r.name for r in run.experiment.roles if r.name != agent.role]
        completion = trimmed = None
        for purpose in ("agent_turn", "agent_turn_retry_empty"):
            on_attempt = run.recorder.call_recorder(
                purpose, day, index, agent.name, agent.llm, messages, params, backend.base_url
            )
            try:
                completion = await backend.chat(messages, params, on_attempt=on_attempt)
            except BackendError as exc:
                raise ConversationFailed(
                    f"{agent.name}'s turn (day {day}, message {index + 1}) failed: {exc}"
                ) from None
            trimmed = trim_reply(completion.text, agent.name, agent.role, others, other_roles)
            if trimmed.text:
                break
        assert completion is not None and trimmed is not None
        doc = {
            "day": day,
            "index": index,
            "seq": turn,
            "speaker": agent.name,
            "role": agent.role,
            "text": trimmed.text,
            "raw_text": completion.text,
            "trimmed": trimmed.trimmed,
            "cut_at": trimmed.cut_at,
            "cut_label": trimmed.cut_label,
            "empty": not trimmed.text,
            "speaker_fallback": pick.fallback,
            "speaker_notes": list(pick.notes),
            "model": agent.llm.model,
            "llm_label": agent.llm.key,
            "latency_s": round(completion.latency_s, 4),
            "tokens_in": completion.tokens_in,
            "tokens_out": completion.tokens_out,
        }
        await run.recorder.record_message(doc)
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
                completion.tokens_out,
            )
        )
        return trimmed.text

    async def _summarise(self, day: int, opening: str, lines: list[Line]) -> None:
        run = self.run_
        choice = self.spec.summarizer_llm or self.agents[0].llm
        messages = summarizer_messages(self.summarizer_prompt, day, opening, lines)
        params = self._params(choice, 10_000 + day)
        backend = run.llms.get(choice)
        on_attempt = run.recorder.call_recorder(
            "summary", day, len(lines), None, choice, messages, params, backend.base_url
        )
        try:
            completion = await backend.chat(messages, params, on_attempt=on_attempt)
        except BackendError as exc:
            raise ConversationFailed(f"the summary of day {day} failed: {exc}") from None
        text = completion.text.strip()
        self.summaries.append(text)
        await run.recorder.record_summary(day, text, completion.text, choice.model, self.summaries)
        run.on_event(ev.DaySummarised(run.conversation_id, day, text))
