"""Who speaks next: small strategies named for what they do.

The deterministic ones are pure functions of the turn number and the previous speaker, so a
conversation resumed after a crash picks exactly the speakers it would have picked.
"""

from __future__ import annotations

import random
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from simulator.worlds.chat.engine.agents import Agent


@dataclass(frozen=True)
class TurnState:
    """What a strategy may look at: the agents, the global turn number, the day so far."""

    agents: Sequence[Agent]
    turn: int  # 0-based over the whole conversation
    day: int
    previous: str | None  # name of the last speaker, if any
    transcript: Sequence[tuple[str, str]] = ()  # (speaker, text) of this day's agent turns
    # False as in the reference (autogen's allow_repeat_speaker=False): under auto and manual
    # the agent who just spoke today may not be picked again.
    allow_repeat: bool = True

    @property
    def barred(self) -> str | None:
        """Who may not speak now: today's last speaker when repeats are off and there is a choice.

        Each day starts fresh, as in the reference, where the researcher's opening is the day's
        first message."""
        if self.allow_repeat or len(self.agents) < 2 or not self.transcript:
            return None
        return self.transcript[-1][0]

    @property
    def eligible(self) -> list[Agent]:
        """The agents who may speak now, in order."""
        return [a for a in self.agents if a.name != self.barred]


@dataclass(frozen=True)
class Pick:
    name: str
    fallback: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


class SpeakerSelector(Protocol):
    async def next_speaker(self, state: TurnState) -> Pick: ...


class RoundRobin:
    """Agents in order, one after another."""

    async def next_speaker(self, state: TurnState) -> Pick:
        return Pick(state.agents[state.turn % len(state.agents)].name)


def fallback_speaker(state: TurnState) -> str:
    """Round robin's agent, or the one after it when that one is barred from speaking again."""
    index = state.turn % len(state.agents)
    if state.agents[index].name == state.barred:
        index = (index + 1) % len(state.agents)
    return state.agents[index].name


class RandomNoRepeat:
    """A seeded random agent, never the previous speaker unless there is only one agent."""

    def __init__(self, seed: int | None):
        self._seed = 0 if seed is None else seed

    async def next_speaker(self, state: TurnState) -> Pick:
        names = [a.name for a in state.agents]
        if len(names) > 1 and state.previous in names:
            names.remove(state.previous)
        rng = random.Random(f"{self._seed}:{state.turn}")
        return Pick(rng.choice(names))


class RoleAlternating:
    """Roles take turns in the experiment's order; agents within a role rotate."""

    async def next_speaker(self, state: TurnState) -> Pick:
        roles: list[str] = []
        for agent in state.agents:
            if agent.role not in roles:
                roles.append(agent.role)
        role = roles[state.turn % len(roles)]
        members = [a for a in state.agents if a.role == role]
        return Pick(members[(state.turn // len(roles)) % len(members)].name)


InputFunction = Callable[[TurnState], Awaitable[str] | str]


class ManualChoice:
    """The user picks, through an injected input function (a questionary prompt in the CLI)."""

    def __init__(self, ask: InputFunction):
        self._ask = ask

    async def next_speaker(self, state: TurnState) -> Pick:
        """Only eligible agents are accepted (the CLI offers only those); the previous speaker
        named anyway counts as an invalid answer and is asked again."""
        names = {a.name.lower(): a.name for a in state.eligible}
        notes: list[str] = []
        for _ in range(5):
            answer = self._ask(state)
            if not isinstance(answer, str):
                answer = await answer
            if answer and answer.strip().lower() in names:
                return Pick(names[answer.strip().lower()], notes=tuple(notes))
            if state.barred and answer and answer.strip().lower() == state.barred.lower():
                notes.append(f"{state.barred} just spoke and may not speak twice in a row")
        return Pick(
            fallback_speaker(state),
            fallback=True,
            notes=(*notes, "no valid manual pick; round robin"),
        )


def find_agent_names(answer: str, names: Sequence[str]) -> list[str]:
    """Agent names mentioned in a manager's answer, matched as whole words, case-insensitive."""
    found = []
    for name in names:
        pattern = r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])"
        if re.search(pattern, answer, flags=re.IGNORECASE):
            found.append(name)
    return found
