"""The accumulated prompt layout of an opinion network (pzs19/LLM-SAM's): one growing text.

As the reference's PromptManager builds it: the background and characteristics (and the
private-information heading with the agent's fact), the first question and the agent's own
first answer as JSON, then every later round's text with the friends' answers it was shown, one
"NAME's ouput is {...}" line each (the reference's spelling), all joined by newlines; the round
being asked comes last. A free-chat round asked as an opinion round is the scenario's
`free_chat_round_prompt` after a blank line, and is not kept in later rounds' text, as in the
reference. The switches (domain/network/prompt_choices.py) may add the agent's later answers or
keep only the last round's friends' answers. Pure text: sent as one user message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from simulator.worlds.network.domain.agents_table import AgentRow
from simulator.worlds.network.domain.answers import Answer
from simulator.worlds.network.domain.prompt_choices import PromptSwitches
from simulator.worlds.network.domain.scenario import Scenario

FRIENDS_FIELD = "{friends_answers}"
Friends = list[tuple[str, Answer]]


def friend_line(name: str, answer: Answer) -> str:
    """One friend's answer, in the reference's words."""
    return f"{name}'s ouput is {json.dumps(answer.as_json(), ensure_ascii=False)}"


def friends_text(friends: Friends) -> str:
    """One line per friend (a round's `friends_texts` entry)."""
    return "\n".join(friend_line(name, answer) for name, answer in friends)


def accumulated_messages(
    scenario: Scenario,
    agent: AgentRow,
    position: int,
    round_index: int,
    switches: PromptSwitches,
    n_friends: int,
    own: list[Answer],
    friends_texts: Sequence[str],
    chat_rounds: set[int],
) -> list[dict]:
    """Agent's prompt in round t = `round_index` >= 1. `own` holds its answers of rounds
    0..t-1; `friends_texts[s]` (s = 1..t) what round s showed, as `friends_text` writes it:
    its friends' answers of round s-1 on round s's graph (index 0 unused; the caller renders
    each answer once per round for all who see it); `chat_rounds` the free-chat rounds, each
    asked as an opinion round."""
    t = round_index
    parts = [_context(scenario, agent, position, switches, n_friends)]
    parts.append(_round_text(scenario, 0, ""))
    parts.append(json.dumps(own[0].as_json(), ensure_ascii=False))
    for s in range(1, t):
        if s in chat_rounds:
            continue
        shown = friends_texts[s] if switches.friends_rounds == "all" else ""
        parts.append(_round_text(scenario, s, shown))
        if switches.own_answers == "all":
            parts.append(json.dumps(own[s].as_json(), ensure_ascii=False))
    text = "\n".join(parts)
    now = friends_texts[t]
    if t in chat_rounds and scenario.free_chat_round_prompt:
        text += "\n\n" + scenario.free_chat_round_prompt.replace(FRIENDS_FIELD, now)
    else:
        text += "\n" + _round_text(scenario, t, now)
    return [{"role": "user", "content": text}]


def _context(
    scenario: Scenario, agent: AgentRow, position: int, switches: PromptSwitches, n: int
) -> str:
    parts = [
        scenario.fill(scenario.background, agent, n, python_floats=True),
        scenario.fill(scenario.characteristics, agent, n, python_floats=True),
    ]
    fact = scenario.private_for(position, switches.private_holders)
    if scenario.private_heading:
        parts.append(f"{scenario.private_heading}\n\n{fact}")
    elif fact:
        parts.append(fact)
    return "\n\n".join(parts)


def _round_text(scenario: Scenario, s: int, friends: str) -> str:
    """Round s's text: the scenario's own `prompt` with the friends' answers put in, else the
    news, the friends' answers, the question and the answer format."""
    now = scenario.round_for(s)
    if now.prompt:
        return now.prompt.replace(FRIENDS_FIELD, friends)
    parts = [f"New information: {now.new_information}"] if now.new_information else []
    if s > 0:
        parts.append(f"Your friends' answers:\n{friends}")
    parts += [f"Round {s}. {now.question}", scenario.answer_format]
    return "\n\n".join(parts)
