"""A sweep's status as `llm-sim sweep status`, the menu and the report show it: counts, calls,
tokens, workers, first failures and spend so far. Kept apart from services/sweeps.py (planning
and creation, with their validation and worlds) so that a status loads only the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator.services.reading import Opens, answer

if TYPE_CHECKING:
    from simulator.store.store import Store


def status(store: Store, sweep_id: str) -> dict:
    """Counts by status, calls and tokens, the workers and the first failures (the store's
    `status_summary`: a handful of queries whatever the sweep's size), and its spend so far
    (the sweep's own counters: store/spend.py)."""
    from simulator.store.spend import SweepSpend  # a file lock: not for the files' answer

    summary = store.sweeps.status_summary(sweep_id)
    summary["spend"] = SweepSpend(store.db, store.connection.lock_path).read(sweep_id)
    return summary


def status_of(where: Opens, sweep_id: str) -> dict:
    """`status`, from the embedded store's files when they can answer (no query engine to
    load: store/file_reads.py), else from the store."""
    from simulator.store.file_reads import sweep_status

    return answer(where, lambda files: sweep_status(files, sweep_id), lambda s: status(s, sweep_id))
