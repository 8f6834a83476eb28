"""The prompts of one agent in one round of an opinion network (LLM-SAM). Pure text.

System: the scenario's background and the agent's characteristics (both filled with its name
and coefficients), and its private fact when the scenario hands them out. User: the earlier
questions with the agent's own answers, the round's new information, its friends' answers of
the round before as JSON (an agent on a self-loop sees its own too, as in the reference), in a
free-chat round the messages its friends wrote this round (JSON, by name), then the question
and the answer format. A free-chat message's prompt has the same system text and history, then
the names of its friends and the scenario's `free_chat_prompt`.

What the agent remembers is the caller's choice (engine/network_memory.py): `own` holds the
answers to list (all of them with the default memory, none otherwise) and `remembered`, when
given, fills a "What you remember" section (a memory stream's recalled records) placed where
the own answers would be.
"""

from __future__ import annotations

import json

from simulator.worlds.network.domain.agents_table import AgentRow
from simulator.worlds.network.domain.answers import Answer
from simulator.worlds.network.domain.scenario import Scenario
from simulator.worlds.network.prompting.memory import REMEMBER_HEADING


def network_messages(
    scenario: Scenario,
    agent: AgentRow,
    position: int,
    round_index: int,
    own: list[Answer],
    friends: list[tuple[str, Answer]],
    heard: dict[str, str] | None = None,
    remembered: str | None = None,
    n_friends: int | None = None,
    holders: int | None = None,
) -> list[dict]:
    """The chat messages of `agent` (at `position` in the table) in round `round_index` >= 1;
    `own` holds its answers of rounds 0..t-1 to show, `friends` its neighbours' of round t-1,
    `heard` (free-chat rounds only; None elsewhere, so those prompts stay as they were) its
    friends' messages of this round by name, `remembered` what its memory stream recalled;
    `n_friends` fills {n_friends} (None: the friends shown), `holders` as in
    Scenario.private_for."""
    parts = _history(scenario, round_index, own, remembered)
    shown = {name: answer.as_json() for name, answer in friends}
    parts.append(f"Your friends' answers in the last round: {json.dumps(shown)}")
    if heard is not None:
        parts.append(f"Your friends' messages to you in this round: {json.dumps(heard)}")
    now = scenario.round_for(round_index)
    parts.append(f"Round {round_index}. {now.question}\n{scenario.answer_format}")
    count = len(friends) if n_friends is None else n_friends
    return _chat(scenario, agent, position, count, parts, holders)


def free_chat_messages(
    scenario: Scenario,
    agent: AgentRow,
    position: int,
    round_index: int,
    own: list[Answer],
    friends: list[str],
    n_friends: int,
    remembered: str | None = None,
    holders: int | None = None,
) -> list[dict]:
    """The prompt of `agent`'s message to its `friends` (names, itself left out) before it
    answers round `round_index`: it knows the round's news and question, not yet their
    answers. `n_friends` fills `{n_friends}` as in the round's answer prompt, so the system
    text is the same in both. `own` and `remembered` as in `network_messages`."""
    parts = _history(scenario, round_index, own, remembered)
    now = scenario.round_for(round_index)
    parts.append(f"Round {round_index}. {now.question}")
    names = ", ".join(friends) if friends else "none"
    parts.append(f"Your friends: {names}\n{scenario.free_chat_prompt}")
    return _chat(scenario, agent, position, n_friends, parts, holders)


def _history(
    scenario: Scenario, round_index: int, own: list[Answer], remembered: str | None
) -> list[str]:
    """The earlier questions with the agent's own answers (those in `own`), what it
    remembers (when given), then the round's new information."""
    parts = []
    for t, answer in enumerate(own):
        asked = scenario.round_for(t).question
        parts.append(f"Round {t}. {asked}\nYour answer: {json.dumps(answer.as_json())}")
    if remembered is not None:
        parts.append(f"{REMEMBER_HEADING}:\n{remembered}")
    now = scenario.round_for(round_index)
    if now.new_information:
        parts.append(f"New information: {now.new_information}")
    return parts


def _chat(
    scenario: Scenario,
    agent: AgentRow,
    position: int,
    n_friends: int,
    parts: list[str],
    holders: int | None = None,
) -> list[dict]:
    system = [
        scenario.fill(scenario.background, agent, n_friends),
        scenario.fill(scenario.characteristics, agent, n_friends),
    ]
    fact = scenario.private_for(position, holders)
    if fact:
        system.append(f"Something you know that others may not: {fact}")
    return [
        {"role": "system", "content": "\n\n".join(system)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
