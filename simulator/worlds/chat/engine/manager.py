"""`auto` speaker selection: a manager LLM picks; bad picks get feedback, then round robin."""

from __future__ import annotations

from collections.abc import Callable

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.llm.base import BackendError
from simulator.llm.retry import Attempt, ResilientBackend
from simulator.prompting.templates import fill, load_template
from simulator.worlds.chat.engine.speakers import (
    Pick,
    TurnState,
    fallback_speaker,
    find_agent_names,
)
from simulator.worlds.chat.prompting.transcript import Line, manager_feedback, manager_messages

CallRecorderFactory = Callable[
    [str, int, int, list[dict], GenerationParams], Callable[[Attempt], None]
]


def repeat_feedback(answer: str, previous: str, names: list[str]) -> str:
    """The manager named the agent who just spoke, which the reference never allowed."""
    template = load_template("manager")["feedback_repeat"]
    return fill(template, answer=answer.strip()[:200], previous=previous, names=", ".join(names))


class ManagerPicks:
    """Asks the manager; an answer naming no agent or several is re-asked with feedback.

    When repeats are off (the default, as in the reference), the manager is offered only the
    agents who may speak now, as autogen does; naming the agent who just spoke anyway is a bad
    pick like the others: feedback, then the fallback."""

    def __init__(
        self,
        backend: ResilientBackend,
        choice: LLMChoice,
        opening: Callable[[int], str],
        record: CallRecorderFactory,
        max_feedback_rounds: int = 2,
    ):
        self._backend = backend
        self._params = choice.params.merge(
            GenerationParams(max_tokens=choice.params.max_tokens or 20)
        )
        self._opening = opening
        self._record = record
        self._rounds = max_feedback_rounds

    async def next_speaker(self, state: TurnState) -> Pick:
        everyone = [a.name for a in state.agents]
        names = [a.name for a in state.eligible]
        barred = state.barred
        lines = [Line(s, t) for s, t in state.transcript]
        messages = manager_messages(
            [(a.name, a.role) for a in state.eligible], self._opening(state.day), lines
        )
        notes: list[str] = []
        for round_number in range(self._rounds + 1):
            # the ledger's index is the position within the day of the message being chosen
            on_attempt = self._record(
                "manager_pick", state.day, len(state.transcript), messages, self._params
            )
            try:
                completion = await self._backend.chat(messages, self._params, on_attempt=on_attempt)
            except BackendError as exc:
                notes.append(f"manager call failed: {exc}")
                break
            named = find_agent_names(completion.text, everyone)
            found = [name for name in named if name != barred]
            if len(found) == 1:
                return Pick(found[0], notes=tuple(notes))
            if barred is not None and not found and barred in named:
                notes.append(f"round {round_number + 1}: answer named {barred}, who just spoke")
                feedback = repeat_feedback(completion.text, barred, names)
            else:
                notes.append(f"round {round_number + 1}: answer named {len(found)} agents")
                feedback = manager_feedback(completion.text, names, len(found) > 1)
            messages = [
                *messages,
                {"role": "assistant", "content": completion.text},
                {"role": "user", "content": feedback},
            ]
        return Pick(
            fallback_speaker(state), fallback=True, notes=(*notes, "fell back to round robin")
        )
