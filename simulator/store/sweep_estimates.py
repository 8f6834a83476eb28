"""The estimate stored on a sweep's document (services/estimates.py makes it)."""

from __future__ import annotations

from simulator.store.store import Store


def save_estimate(store: Store, sweep_id: str, estimate: dict) -> bool:
    """Store `estimate` on the sweep unless it has one (the estimate made when the sweep was
    first created stays: re-creating the identical sweep is a no-op); True when written."""
    result = store.db.sweeps.update_one(
        {"_id": sweep_id, "estimate": {"$exists": False}}, {"$set": {"estimate": estimate}}
    )
    return bool(result.modified_count)
