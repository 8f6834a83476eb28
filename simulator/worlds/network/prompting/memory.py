"""The opinion network's memory-stream texts: what an agent perceived in a round, as records,
and what it asks its stream before answering. Pure text, so a resumed run makes the same
records and the same queries again.

Perception is what the agent was shown or did, in the order it happened: the round's news,
its friends' answers of the round before (shown in its prompt), in a free-chat round its own
message and each friend's, then its own answer. Friends' answers of round t are perceived in
round t+1 (that is when the agent reads them), so the query of round t+1, which names them,
does not merely find them again in the stream.

The query of round t: the round's news and question, then each friend's answer of round t-1
(the friends' answers the prompt shows), so the stream returns what bears on this decision
and on these friends.
"""

from __future__ import annotations

from simulator.worlds.network.domain.answers import Answer
from simulator.worlds.network.domain.scenario import Scenario

REMEMBER_HEADING = "What you remember"  # the prompt section the recalled records fill


def answer_phrase(answer: Answer) -> str:
    decision = "Yes" if answer.decision else "No"
    thought = f' ("{answer.thought}")' if answer.thought else ""
    return f"opinion {answer.opinion} of 10, decision {decision}{thought}"


def own_answer(t: int, answer: Answer) -> str:
    """The record of the agent's own answer of round t (round 0: the table's)."""
    return f"I answered in round {t}: {answer_phrase(answer)}"


def friend_answer(name: str, t: int, answer: Answer) -> str:
    """The record of a friend's answer of round t, as the agent read it in round t+1."""
    return f"{name} answered in round {t}: {answer_phrase(answer)}"


def news(t: int, text: str) -> str:
    return f"News in round {t}: {text}"


def own_message(t: int, said: str) -> str:
    return f"I told my friends in round {t}: {said}"


def friend_message(name: str, t: int, said: str) -> str:
    return f"{name} told me in round {t}: {said}"


def recall_query(scenario: Scenario, t: int, friends: list[tuple[str, Answer]]) -> str:
    """What agent asks its stream before round t (see the module docstring)."""
    now = scenario.round_for(t)
    parts = [now.new_information, now.question] if now.new_information else [now.question]
    if friends:
        shown = "; ".join(f"{name}: {answer_phrase(a)}" for name, a in friends)
        parts.append(f"My friends answered in round {t - 1}: {shown}")
    return "\n".join(parts)


def perceived_texts(
    scenario: Scenario,
    t: int,
    answer: Answer,
    friends: list[tuple[str, Answer]],
    said: str | None,
    heard: dict[str, str] | None,
) -> list[tuple[str, str]]:
    """One agent's records of round t >= 1 as (memory type, text), in the order it perceived
    them: the news, its friends' answers of round t-1 (itself left out), its own message and its
    friends' (free-chat rounds, type "chat"; empty ones left out), its own answer."""
    now = scenario.round_for(t)
    seen = [news(t, now.new_information)] if now.new_information else []
    seen += [friend_answer(name, t - 1, a) for name, a in friends]
    chats = [own_message(t, said)] if said else []
    chats += [friend_message(name, t, text) for name, text in (heard or {}).items() if text]
    return [
        *(("observation", text) for text in seen),
        *(("chat", text) for text in chats),
        ("observation", own_answer(t, answer)),
    ]
