"""Spend as one small mapping (calls, tokens in and out, dollars, calls of unknown price,
seconds), how it adds up and how it reads: plain Python, so that `sweep status` shows a sweep's
spend without loading the caps' validation (domain/budget.py)."""

from __future__ import annotations

SPEND_FIELDS = ("calls", "tokens_in", "tokens_out", "cost", "cost_unknown_calls", "seconds")


def empty_spend() -> dict:
    return {"calls": 0, "tokens_in": 0, "tokens_out": 0, "cost": 0.0, "cost_unknown_calls": 0,
            "seconds": 0.0}  # fmt: skip


def add_spend(total: dict, delta: dict) -> dict:
    """Add `delta` into `total` (in place); `total` is returned."""
    for name in SPEND_FIELDS:
        total[name] = total.get(name, 0) + delta.get(name, 0)
    return total


def spend_of(stored: dict | None) -> dict:
    """A stored spend mapping (a run's or a sweep's), every field present."""
    return add_spend(empty_spend(), stored or {})


def money(value: float) -> str:
    """Dollars as a researcher reads them: cents, or four decimals below a dime."""
    return f"${value:,.2f}" if value >= 0.1 or value == 0 else f"${value:.4f}"


def describe_spend(spend: dict) -> str:
    """One line: calls, tokens, money (or how many calls have no known price), time."""
    s = spend_of(spend)
    tokens = s["tokens_in"] + s["tokens_out"]
    parts = [
        f"{s['calls']:,} calls",
        f"{tokens:,} tokens ({s['tokens_in']:,} in, {s['tokens_out']:,} out)",
    ]
    unknown = s["cost_unknown_calls"]
    if unknown and s["calls"] == unknown:
        parts.append(f"price unknown for {unknown:,} calls")
    elif unknown:
        parts.append(f"{money(s['cost'])} + price unknown for {unknown:,} calls")
    else:
        parts.append(money(s["cost"]))
    parts.append(f"{s['seconds']:,.1f} s of calls")
    return ", ".join(parts)
