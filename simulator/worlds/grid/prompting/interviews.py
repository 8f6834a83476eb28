"""The interviews a probe asks after a run's last step (Park et al. 2023, section 7.1): does
the agent know of the news, does it know each other agent. One user message each, sent alone,
so the ledger holds exactly what was asked; the answer starts with yes or no."""

from __future__ import annotations

NEWS = (
    "You are {name}. {identity}\n"
    "What you recall:\n{recalled}\n\n"
    "An interviewer asks you: {question}\n"
    "Answer yes or no first, then explain in one sentence."
)
KNOWS = (
    "You are {name}. {identity}\n"
    "What you recall:\n{recalled}\n\n"
    "An interviewer asks you: Do you know {other}?\n"
    "Answer yes or no first, then say in one sentence what you know about {other}."
)


def news_messages(name: str, identity: str, recalled: str, question: str) -> list[dict]:
    text = NEWS.format(name=name, identity=identity, recalled=recalled, question=question)
    return [{"role": "user", "content": text}]


def knows_messages(name: str, identity: str, recalled: str, other: str) -> list[dict]:
    text = KNOWS.format(name=name, identity=identity, recalled=recalled, other=other)
    return [{"role": "user", "content": text}]
