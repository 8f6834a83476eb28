"""The prompt of one agent in one round of an opinion network (LLM-SAM). Pure text.

System: the scenario's background and the agent's characteristics (both filled with its name
and coefficients), and its private fact when the scenario hands them out. User: the earlier
questions with the agent's own answers, the round's new information, its friends' answers of
the round before as JSON (an agent on a self-loop sees its own too, as in the reference), then
the question and the answer format.
"""

from __future__ import annotations

import json

from simulator.domain.network.agents_table import AgentRow
from simulator.domain.network.answers import Answer
from simulator.domain.network.scenario import Scenario


def network_messages(
    scenario: Scenario,
    agent: AgentRow,
    position: int,
    round_index: int,
    own: list[Answer],
    friends: list[tuple[str, Answer]],
) -> list[dict]:
    """The chat messages of `agent` (at `position` in the table) in round `round_index` >= 1;
    `own` holds its answers of rounds 0..t-1, `friends` its neighbours' of round t-1."""
    system = [
        scenario.fill(scenario.background, agent, len(friends)),
        scenario.fill(scenario.characteristics, agent, len(friends)),
    ]
    fact = scenario.private_for(position)
    if fact:
        system.append(f"Something you know that others may not: {fact}")
    parts = []
    for t, answer in enumerate(own):
        asked = scenario.round_for(t).question
        parts.append(f"Round {t}. {asked}\nYour answer: {json.dumps(answer.as_json())}")
    now = scenario.round_for(round_index)
    if now.new_information:
        parts.append(f"New information: {now.new_information}")
    shown = {name: answer.as_json() for name, answer in friends}
    parts.append(f"Your friends' answers in the last round: {json.dumps(shown)}")
    parts.append(f"Round {round_index}. {now.question}\n{scenario.answer_format}")
    return [
        {"role": "system", "content": "\n\n".join(system)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
