"""A personality test asked at a grid run's first and last step: the `personality:` block, the
shipped A/B inventories, reading an answer as A or B, and scoring answers into a type. Pure.

Takata et al. (2024, section 3.4) asked each agent 93 A/B MBTI items, one call per item, with
the move prompt's header (who and where the agent is, its memory) in front of each question,
at step 0 and after step 100, and tabulated each agent's type at both times. The MBTI items
are proprietary; the shipped inventory is the Open Extended Jungian Type Scales 1.2 (32 A/B
items on the same four scales, CC BY-NC-SA 4.0; prompts/inventories/oejts.yaml).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

Choice = Literal["A", "B"]
WHEN = ("first", "last")  # before step 1 (the paper's step 0), after the last step
INVENTORIES = ("oejts",)  # shipped under prompts/inventories/
ITEM_FIELDS = ("statement_a", "statement_b")
DEFAULT_PROMPT = (
    "You are {name}, an agent at position ({x}, {y}) on a {width} by {height} field with "
    "periodic boundaries. There are {agents} agents, including you.\n"
    "Your summary memory so far: {memory}\n"
    "Which of these two descriptions fits you better?\n"
    "A. {statement_a}\n"
    "B. {statement_b}\n"
    "Answer with the letter A or the letter B only."
)


class PersonalityProbe(BaseModel):
    """`personality:` on a grid experiment: which inventory, when, and the question asked."""

    model_config = ConfigDict(extra="forbid")

    inventory: Literal["oejts"] = "oejts"
    at: list[Literal["first", "last"]] = Field(default_factory=lambda: list(WHEN), min_length=1)
    # the grid's prompt fields ({name}, {memory}, ...) and the item's {statement_a}, {statement_b}
    prompt: str = Field(default=DEFAULT_PROMPT, min_length=1, max_length=20_000)

    @field_validator("at")
    @classmethod
    def _once_each(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("name each of first and last at most once")
        return [w for w in WHEN if w in value]

    @field_validator("prompt")
    @classmethod
    def _both_statements(cls, value: str) -> str:
        from simulator.worlds.grid.domain.experiment import TEMPLATE_FIELDS  # a cycle otherwise

        try:
            named = {f for _, f, _, _ in string.Formatter().parse(value) if f is not None}
        except ValueError as exc:
            raise ValueError(f"{exc} (write a literal brace as {{{{ or }}}})") from None
        unknown = named - set(TEMPLATE_FIELDS) - set(ITEM_FIELDS)
        if unknown:
            raise ValueError(
                f"unknown field {{{sorted(unknown)[0]}}}; the fields are "
                + " ".join(f"{{{n}}}" for n in (*TEMPLATE_FIELDS, *ITEM_FIELDS))
            )
        if not set(ITEM_FIELDS) <= named:
            raise ValueError("the prompt must show both {statement_a} and {statement_b}")
        return value

    def calls(self, agents: int) -> int:
        """One call per item per agent at each time asked."""
        return len(self.at) * len(load_inventory(self.inventory).items) * agents

    def describe(self, agents: int) -> str:
        inventory = load_inventory(self.inventory)
        times = " and ".join(
            "before step 1" if w == "first" else "after the last step" for w in self.at
        )
        return (
            f"{inventory.title} ({len(inventory.items)} A/B items, {inventory.licence}) asked "
            f"{times}, one call per item per agent ({self.calls(agents):,} calls)"
        )


@dataclass(frozen=True)
class Item:
    id: int
    scale: str
    sign: int  # +1: answer B moves the score towards the scale's high letter
    a: str
    b: str


@dataclass(frozen=True)
class Scale:
    name: str
    high: str
    low: str
    base: int


@dataclass(frozen=True)
class Inventory:
    name: str
    title: str
    source: str
    licence: str
    scales: tuple[Scale, ...]
    items: tuple[Item, ...]
    value_a: int
    value_b: int
    unanswered: int
    cut: int

    def score(self, choices: list[Choice | None]) -> dict[str, int]:
        """Each scale's score by the inventory's key (an unanswered item counts the middle)."""
        value = {"A": self.value_a, "B": self.value_b, None: self.unanswered}
        scores = {s.name: s.base for s in self.scales}
        for item, choice in zip(self.items, choices, strict=True):
            scores[item.scale] += item.sign * value[choice]
        return scores

    def type_of(self, choices: list[Choice | None]) -> str:
        """The four letters, e.g. "INFJ": a scale's high letter when its score is above the cut
        (the key's rule: exactly the cut gives the low letter)."""
        scores = self.score(choices)
        return "".join(s.high if scores[s.name] > self.cut else s.low for s in self.scales)

    def letter_shares(self, choices: list[Choice | None]) -> dict[str, float | None]:
        """Per letter, the share of the scale's answered items that point to it (the paper's
        appendix shows each scale's split this way); None when none was answered."""
        shares: dict[str, float | None] = {}
        for scale in self.scales:
            pointed = [
                _points_to(item, choice, scale)
                for item, choice in zip(self.items, choices, strict=True)
                if item.scale == scale.name and choice is not None
            ]
            for letter in (scale.high, scale.low):
                shares[letter] = pointed.count(letter) / len(pointed) if pointed else None
        return shares


def _points_to(item: Item, choice: Choice, scale: Scale) -> str:
    toward_high = (choice == "B") == (item.sign > 0)
    return scale.high if toward_high else scale.low


@cache
def load_inventory(name: str) -> Inventory:
    """A shipped inventory, read from the package (prompts/inventories/NAME.yaml)."""
    if name not in INVENTORIES:
        raise ValueError(f"no inventory {name!r}; shipped: {', '.join(INVENTORIES)}")
    path = files("simulator") / "prompts" / "inventories" / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    scoring = data["scoring"]
    return Inventory(
        name=data["name"],
        title=data["title"],
        source=data["source"],
        licence=data["licence"],
        scales=tuple(Scale(**s) for s in data["scales"]),
        items=tuple(Item(**i) for i in data["items"]),
        value_a=int(scoring["a"]),
        value_b=int(scoring["b"]),
        unanswered=int(scoring["unanswered"]),
        cut=int(scoring["cut"]),
    )


_LEADING = re.compile(
    r"^[\s\"'*`(\[]*(?:(?:my\s+)?(?:final\s+)?(?:answer|choice|option)\s*(?:is)?\s*[:\-]?\s*)?"
    r"[\"'*`(\[]*([AB])(?![A-Za-z])(?!\s+[a-z])",
    re.IGNORECASE,
)
_NAMED = re.compile(
    r"\b(?:answer|choice|option|choose|chose|pick|select|prefer|go with)\b\W{0,3}(?:is\W{0,3})?"
    r"(?:option\W{0,3})?\(?([AB])\b(?!\s+[a-z])"
)
_LETTER = re.compile(r"(?<![A-Za-z'])([AB])(?![A-Za-z'])")
_ARTICLE = re.compile(r"A\s+(?!(?:or|and|nor|vs|versus)\b)[a-z]")  # "A person", not "A or B"


def parse_choice(reply: str, statement_a: str = "", statement_b: str = "") -> Choice | None:
    """The letter an answer chose, or None (a counted fallback, never read as A or B).

    In order: a reply that starts with the letter ("B", "(A)", "Answer: B."); a letter named
    after answer/option/choose/prefer ("I choose B"); the one statement quoted whole; the
    only letter standing alone in the reply ("A" as an article, "A person", is not one)."""
    text = (reply or "").strip()
    found = _LEADING.match(text)
    if found:
        return found.group(1).upper()  # type: ignore[return-value]
    found = _NAMED.search(text)
    if found:
        return found.group(1)  # type: ignore[return-value]
    folded = text.casefold()
    quoted = [
        letter
        for letter, statement in (("A", statement_a), ("B", statement_b))
        if statement and statement.casefold() in folded
    ]
    if len(quoted) == 1:
        return quoted[0]  # type: ignore[return-value]
    letters = {
        m.group(1)
        for m in _LETTER.finditer(text)
        if not (m.group(1) == "A" and _ARTICLE.match(text, m.start()))
    }
    return letters.pop() if len(letters) == 1 else None  # type: ignore[return-value]
