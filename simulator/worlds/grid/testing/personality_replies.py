"""Answers to the grid's personality test for the loopback stub, so tests and demos read real
A/B parsing without a model: a reply function that answers the test's prompts (the shipped
question shows "A. ..." and "B. ..." lines) with `choose(name, statement_a, statement_b)` and
passes every other prompt on to `other`."""

from __future__ import annotations

import re
from collections.abc import Callable

_ITEM = re.compile(r"^A\. (.*)\nB\. (.*)$", re.M)
_NAME = re.compile(r"You are ([\w-]+)")


def personality_reply(
    choose: Callable[[str, str, str], str], other: Callable[[dict], str]
) -> Callable[[dict], str]:
    """A stub `reply_fn`: the test's items get `choose(...)`'s text, the rest `other(body)`."""

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        item = _ITEM.search(prompt)
        if item is None:
            return other(body)
        name = _NAME.search(prompt)
        return choose(name.group(1) if name else "?", item.group(1), item.group(2))

    return reply


def by_agent(letters: dict[str, str], default: str = "A") -> Callable[[str, str, str], str]:
    """Every item answered "<letter>." with the agent's letter (`default` for the others)."""
    return lambda name, a, b: f"{letters.get(name, default)}."
