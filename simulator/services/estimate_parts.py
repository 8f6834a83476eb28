"""What a world tells the house about a run's cost before it runs: its calls, with their tokens.

Each world's `services/estimate.py` (the registry's `part(kind, "services.estimate")`) is a
module with the names of `EstimatePart`. The house (services/estimates.py) gives it a `Shape`
(how prompt text is counted, how long a reply is expected to be) and adds up money and time
from the price table and the ledger; a world only says which calls one of its runs makes and
how big each prompt is. A world without the part gets no estimate (its plan says so).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.pricing import PriceFields
from simulator.llm.token_count import TokenCounter
from simulator.services.experiments import ExperimentView

# stands around an LLM key in rendered prompts: plain ASCII, so it survives JSON (a network's
# answers are shown as JSON) and never occurs in a prompt by chance
_MARK = "@@reply@@"
DEFAULT_REPLY_TOKENS = 256  # a reply's length when neither max_tokens nor the ledger says


@dataclass(frozen=True)
class CallTally:
    """Calls of one model in one run: how many, their tokens, and how many of them wait for
    the one before (the rest go out at the same time as others: a step's agents)."""

    model: str  # the model string the price is looked up by
    key: str  # what the ledger and the estimate call it (an LLM entry's label, else its model)
    calls: int
    tokens_in: int
    tokens_out: int
    one_after_another: int  # of `calls`, those that cannot overlap (wall time)
    price: PriceFields | None = None  # the experiment's own price for this entry

    @classmethod
    def of(cls, choice: LLMChoice, calls: int, tokens_in: int, tokens_out: int, serial: int):
        return cls(choice.model, choice.key, calls, tokens_in, tokens_out, serial, choice.price)


@dataclass
class Shape:
    """What a world needs to size its prompts: a token counter per LLM entry and the expected
    length of a reply (the ledger's mean for that model when it has replies, else max_tokens,
    else DEFAULT_REPLY_TOKENS)."""

    counter_of: Callable[[LLMChoice], TokenCounter]
    ledger_reply: Callable[[str], float | None]  # model string -> its stored replies' mean
    _counters: dict[str, TokenCounter] = field(default_factory=dict)
    _replies: dict[str, int] = field(default_factory=dict)
    # (counter, text) -> tokens: a sweep's cells render the same day openings over and over
    # (100 cells of 1 to 100 days: 40,000 texts to count, 200 of them different)
    _counted: dict[tuple[str, str], int] = field(default_factory=dict)

    def counter(self, choice: LLMChoice) -> TokenCounter:
        found = self._counters.get(choice.key)
        if found is None:
            found = self._counters[choice.key] = self.counter_of(choice)
        return found

    def reply_tokens(self, choice: LLMChoice) -> int:
        found = self._replies.get(choice.key)
        if found is None:
            found = self._replies[choice.key] = self._reply_tokens(choice)
        return found

    def _reply_tokens(self, choice: LLMChoice) -> int:
        measured = self.ledger_reply(choice.model)
        if measured is not None:
            return max(1, round(measured))
        if choice.params.max_tokens:
            return choice.params.max_tokens
        return DEFAULT_REPLY_TOKENS

    def placeholder(self, choice: LLMChoice) -> str:
        """Text standing for one reply of `choice` in a prompt: `Shape.tokens` counts each at
        the expected reply length (world modules render their real prompts around it)."""
        return f"{_MARK}{choice.key}{_MARK}"

    def tokens(self, choice: LLMChoice, messages: list[dict], known: dict[str, LLMChoice]) -> int:
        """The tokens of a prompt (as `choice`'s counter counts them) whose replies are
        placeholders of the entries in `known` (by key)."""
        counter = self.counter(choice)
        total = 0
        for message in messages:
            text = str(message.get("content", ""))
            parts = text.split(_MARK)
            fixed = "".join(parts[0::2])
            counted = self._counted.get((counter.name, fixed))
            if counted is None:
                counted = self._counted[(counter.name, fixed)] = counter.count(fixed)
            total += counted + counter.per_message
            for key in parts[1::2]:
                total += self.reply_tokens(known[key]) if key in known else 0
        return total


class EstimatePart(Protocol):
    """A world's estimate (`simulator/worlds/<kind>/services/estimate.py`)."""

    def run_calls(self, view: ExperimentView, run: Any, shape: Shape) -> list[CallTally]:
        """The calls one run of `run` (its run spec, as `llm-sim run` or a sweep's cell builds
        it) is expected to make, per model."""

    def calls_at_least(self, run: Any) -> bool:
        """Whether the run makes calls no plan can count (a memory stream's ratings and
        reflections): the estimate then says "at least"."""
