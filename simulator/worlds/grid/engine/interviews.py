"""A probe's interviews after the last step: every agent asked the news question, and every
agent asked about every other agent (`probe.news`, `probe.relationships`; domain/probe.py).

Each answer is one call (purposes `probe_news`, `probe_knows`) through the world's ActorCalls,
so the ledger holds it and a run killed during the interviews replays what was answered. What
an agent is shown is what it remembers, as its world's memory gives it (`Recall`): a stream's
records retrieved for the question, a summary memory's last text, or nothing. The answers are
stored with the run (`interviews`); whether a yes is backed by the agent's memory is the
analysis's check (analysis/grid/party.py), so it can be re-read against the stored streams.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from simulator.domain.llm_choice import LLMChoice
from simulator.engine.step_calls import ActorCall, ActorCalls, placed_params
from simulator.worlds.grid.domain.probe import Probe, parse_yes_no
from simulator.worlds.grid.prompting.interviews import knows_messages, news_messages

INTERVIEW_FALLBACKS = "interview_fallbacks"  # counter: answers starting with neither yes nor no
NEWS, KNOWS = "probe_news", "probe_knows"

# (agent, query) pairs -> for each, the text the agent is shown and the memory ids in it
Recall = Callable[[list[tuple[int, str]]], Awaitable[list[tuple[str, list[str]]]]]


@dataclass(frozen=True)
class Interviewees:
    """Who is interviewed and through which model: the run's agents after its last step."""

    names: list[str]
    identities: list[str]
    llm: LLMChoice
    seed: int | None
    step: int  # the interviews' place in the ledger: the step after the last


async def interview(
    calls: ActorCalls, probe: Probe, who: Interviewees, recall: Recall, counters: dict[str, int]
) -> list[dict]:
    """Every interview's question, answer and reading, news first, then agent by agent."""
    counters.setdefault(INTERVIEW_FALLBACKS, 0)
    n = len(who.names)
    asks: list[tuple[int, str, str]] = []  # (agent, about, query)
    if probe.news is not None:
        asks += [(i, "news", probe.news.question) for i in range(n)]
    if probe.relationships:
        asks += [(i, who.names[j], who.names[j]) for i in range(n) for j in range(n) if j != i]
    if not asks:
        return []
    shown = await recall([(i, query) for i, _, query in asks])
    prepared = []
    for index, ((i, about, query), (recalled, ids)) in enumerate(zip(asks, shown, strict=True)):
        name, identity = who.names[i], who.identities[i]
        if about == "news":
            purpose, messages = NEWS, news_messages(name, identity, recalled, query)
        else:
            purpose, messages = KNOWS, knows_messages(name, identity, recalled, about)
        prepared.append((i, about, query, ids, purpose, messages, index))
    replies = await calls.run(
        [
            ActorCall(
                purpose,
                who.step,
                index,
                who.names[i],
                who.llm,
                messages,
                placed_params(who.llm.params, who.seed, purpose, who.step, i, index),
                f"{who.names[i]}'s interview ({'the news' if about == 'news' else about})",
            )
            for i, about, _, _, purpose, messages, index in prepared
        ]
    )
    found = []
    for (i, about, query, ids, _, _, _), reply in zip(prepared, replies, strict=True):
        says = parse_yes_no(reply.text)
        counters[INTERVIEW_FALLBACKS] += int(says is None)
        found.append(
            {
                "agent": who.names[i],
                "agent_index": i,
                "about": about,
                "question": query if about == "news" else f"Do you know {about}?",
                "answer": reply.text.strip(),
                "says_yes": bool(says),
                "answer_fallback": says is None,
                "retrieved": ids,
            }
        )
    return found
