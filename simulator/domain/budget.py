"""Spend and caps, as pure rules: what one ledger row costs, how spend adds up, and when a cap
on money, tokens or calls is reached.

Spend is kept as one small mapping wherever it is counted (a run's `spend` field, a sweep's):
calls, tokens in and out, dollars, the calls whose price is unknown (never counted as free)
and the seconds the calls took.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from simulator.domain.fork import EDIT_PURPOSE
from simulator.domain.pricing import Price, price_for
from simulator.domain.spend import (  # noqa: F401  (kept importable from here)
    SPEND_FIELDS,
    add_spend,
    describe_spend,
    empty_spend,
    money,
    spend_of,
)

# the exit status of a command stopped by a cap: distinct from success (0), failure (1), bad
# input (2), Ctrl-C (130) and SIGTERM (143)
CAP_REACHED_EXIT = 3


def price_override(choice: object) -> dict | None:
    """An LLM entry's own price (input, output, cached_input per million tokens), if it has one."""
    price = getattr(choice, "price", None)
    if price is None:
        return None
    return price if isinstance(price, dict) else price.model_dump(exclude_none=True)


def price_of(choice: object) -> Price | None:
    """The price of an LLM entry (`LLMChoice`): its own, else the table's; None: unknown."""
    return price_for(choice.model, price_override(choice))  # type: ignore[attr-defined]


def call_cost(price: Price | None, done: bool, tokens_in: int | None, tokens_out: int | None):
    """Dollars of one attempt: None when the price is unknown, or when a reply came back without
    its token counts; 0 for an attempt that got no reply (nothing is billed for it)."""
    if price is None:
        return None
    if not done:
        return 0.0
    if tokens_in is None or tokens_out is None:
        return None
    return round(price.cost(tokens_in, tokens_out), 10)


def call_spend(row: dict) -> dict | None:
    """What one ledger row adds to spend; None for a row no model answered (a fork's edit).
    A row stored before money was counted (no `cost` field) counts as of unknown price."""
    if row.get("purpose") == EDIT_PURPOSE:
        return None
    cost = row.get("cost")
    return {
        "calls": 1,
        "tokens_in": int(row.get("tokens_in") or 0),
        "tokens_out": int(row.get("tokens_out") or 0),
        "cost": float(cost or 0.0),
        "cost_unknown_calls": int(cost is None and row.get("state") != "in_flight"),
        "seconds": float(row.get("latency_s") or 0.0),
    }


class Caps(BaseModel):
    """Limits on what a run or a sweep may spend: dollars, tokens (in and out), calls. Reaching
    one stops new work; calls already in flight finish."""

    model_config = ConfigDict(extra="forbid")

    max_cost: float | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_calls: int | None = Field(default=None, ge=1)
    # the caps that came from the sweep file (not the command line): named so in the messages
    _from_file: frozenset[str] = PrivateAttr(default=frozenset())

    def any(self) -> bool:
        return any(v is not None for v in (self.max_cost, self.max_tokens, self.max_calls))

    def over(self, base: Caps | None) -> Caps:
        """These caps over `base` (a sweep file's): each one given here wins."""
        merged = (base or Caps()).model_dump()
        given = {k: v for k, v in self.model_dump().items() if v is not None}
        merged.update(given)
        caps = Caps(**merged)
        caps._from_file = frozenset(
            k for k, v in merged.items() if v is not None and k not in given
        )
        return caps

    def _named(self, field: str, value: object) -> str:
        """How the message names a cap: the flag that set it, or the sweep file's entry."""
        if field in self._from_file:
            return f"caps.{field}: {value} in the sweep file"
        return f"--{field.replace('_', '-')} {value}"

    def reached(self, spend: dict) -> str | None:
        """Which cap `spend` has reached, said with what was spent; None while under all."""
        s = spend_of(spend)
        tokens = s["tokens_in"] + s["tokens_out"]
        if self.max_cost is not None and s["cost"] >= self.max_cost:
            cap = self._named("max_cost", f"{self.max_cost:g}")
            return f"the cost cap ({cap}) was reached: {money(s['cost'])}"
        if self.max_tokens is not None and tokens >= self.max_tokens:
            cap = self._named("max_tokens", self.max_tokens)
            return f"the token cap ({cap}) was reached: {tokens:,} tokens"
        if self.max_calls is not None and s["calls"] >= self.max_calls:
            cap = self._named("max_calls", self.max_calls)
            return f"the call cap ({cap}) was reached: {s['calls']:,} calls"
        return None
