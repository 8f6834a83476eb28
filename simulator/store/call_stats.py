"""What the ledger says of a model so far: its replies' mean length and its calls' mean latency.

Why: an estimate before a sweep sizes each reply and each call's time from what the same model
did before, when it did anything; a few thousand recent calls per model are enough for a mean,
so a large ledger is not read whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from simulator.store.store import Store

SAMPLE = 2000  # calls read per model at most


@dataclass(frozen=True)
class ModelCalls:
    model: str
    calls: int  # the answered calls read
    mean_tokens_out: float | None  # None: no call reported its tokens
    mean_latency_s: float | None


def model_calls(store: Store, models: Iterable[str]) -> dict[str, ModelCalls]:
    """The answered calls of each model string in the ledger (models with none left out)."""
    found: dict[str, ModelCalls] = {}
    for model in dict.fromkeys(models):
        rows = list(
            store.db.calls.find(
                {"model": model, "state": "done"}, {"tokens_out": 1, "latency_s": 1}
            ).limit(SAMPLE)
        )
        if not rows:
            continue
        out = [r["tokens_out"] for r in rows if isinstance(r.get("tokens_out"), int | float)]
        seconds = [r["latency_s"] for r in rows if isinstance(r.get("latency_s"), int | float)]
        found[model] = ModelCalls(
            model,
            len(rows),
            sum(out) / len(out) if out else None,
            sum(seconds) / len(seconds) if seconds else None,
        )
    return found
