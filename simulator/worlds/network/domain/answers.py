"""An agent's answer in a round: a thought, an opinion 0..10 and a Yes/No decision.

Models wrap the JSON in prose, code fences and examples, so `parse_answer` reads the first
JSON object that has the three keys and checks it; anything it cannot read is None, and the
caller retries, then keeps the previous answer and records the failure (`settle`), where the
reference kept it silently. Round 0 asks no model: `round_zero` reads the agents table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from simulator.worlds.network.domain.agents_table import AgentRow

MAX_ATTEMPTS = 3  # tries per agent per round before the previous answer is kept
MAX_SCANNED_CHARS = 20_000  # a reply is read this far; a 256-token answer is ~1,000
MAX_CANDIDATES = 200  # `{` positions tried before giving up (hostile replies)
OPINION_MIN, OPINION_MAX = 0, 10
KEYS = ("thought", "opinion", "decision")


@dataclass(frozen=True)
class Answer:
    thought: str
    opinion: int  # 0..10
    decision: bool  # True: Yes

    def as_json(self) -> dict[str, Any]:
        """The answer as the model writes it (and as neighbours are shown it)."""
        return {
            "Thought": self.thought,
            "Opinion": self.opinion,
            "Decision": "Yes" if self.decision else "No",
        }


def parse_answer(text: str | None) -> Answer | None:
    """The answer in a reply, or None.

    The first `{...}` that loads as a JSON object with the keys Thought, Opinion and Decision
    (any case) decides; objects before it without the keys (an example, a wrapper) are passed
    over, and an object nested in one is found. Opinion: a whole number 0..10, written as a
    number or a string ("7"); Decision: "yes" or "no" in any case (a trailing full stop
    allowed). A keyed object with a bad value is None: a later one is not looked for.
    """
    text = (text or "")[:MAX_SCANNED_CHARS]
    decoder = json.JSONDecoder()
    at, tried = text.find("{"), 0
    while at != -1 and tried < MAX_CANDIDATES:
        tried += 1
        try:
            found, _ = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):  # RecursionError: arrays nested too deep
            found = None
        if isinstance(found, dict):
            fields = {str(k).strip().lower(): v for k, v in found.items()}
            if all(k in fields for k in KEYS):
                return _checked(fields)
        at = text.find("{", at + 1)
    return None


def _checked(fields: dict[str, Any]) -> Answer | None:
    thought, opinion, decision = (fields[k] for k in KEYS)
    value = _opinion(opinion)
    if value is None or not isinstance(decision, str):
        return None
    word = decision.strip().rstrip(".").strip().lower()
    if word not in ("yes", "no"):
        return None
    if not isinstance(thought, str):
        thought = "" if thought is None else json.dumps(thought, ensure_ascii=False)
    return Answer(thought=thought.strip(), opinion=value, decision=word == "yes")


def _opinion(value: Any) -> int | None:
    """7, 7.0 and "7" are 7; 7.5, true, 11 and "seven" are not an opinion."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            return None
    if isinstance(value, float):
        if not value.is_integer():
            return None
        value = int(value)
    if isinstance(value, int) and OPINION_MIN <= value <= OPINION_MAX:
        return value
    return None


def opinion_scale(share: float) -> int:
    """An opinion in [0, 1] on the answer's 0..10 scale: int(O x 10), truncated as the
    reference does (0.45 -> 4, 0.99 -> 9, 1.0 -> 10). Where the spec says round(O x 10) in one
    place and int(O x 10) in its checks, we follow the reference and the checks. O x 10 is
    first rounded to 9 decimals, so a value stored as 0.7 (6.999... x 10 in binary) is 7."""
    return int(round(share * 10, 9))


def round_zero(agent: AgentRow) -> Answer:
    """Round 0, no model: opinion int(O_initial x 10) (see `opinion_scale`), decision Yes
    when A_initial is 1, thought the participant's own text."""
    return Answer(
        thought=agent.text, opinion=opinion_scale(agent.opinion), decision=agent.action == 1
    )


def settle(replies: Iterable[str | None], previous: Answer) -> tuple[Answer, int, bool]:
    """The round's answer from up to MAX_ATTEMPTS replies: (answer, attempts used, failed).

    The first reply that parses wins; when none does, the previous round's answer is kept and
    `failed` is True so the caller records it. `replies` may be a generator that calls the
    model (with a new seed each time) only when the one before failed."""
    attempts = 0
    for reply in replies:
        attempts += 1
        answer = parse_answer(reply)
        if answer is not None:
            return answer, attempts, False
        if attempts >= MAX_ATTEMPTS:
            break
    return previous, attempts, True
