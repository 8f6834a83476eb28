"""What `sweep status` shows of a sweep, from its document and its counts by status: shared by
the sweeps' repository and the embedded store's files read without the store (file_reads.py),
so both answer alike. Plain Python: no store driver, no file lock."""

from __future__ import annotations

from collections.abc import Callable

from simulator.domain.vocabulary import CONVERSATION_STATUSES


def kept_totals(kept: dict[str | None, dict[str, int]]) -> dict[str, dict[str, int]]:
    """`status_totals` from the kept counts: statuses outside CONVERSATION_STATUSES are not
    counted, and waiting (pending) conversations count no calls, as on the servers."""
    totals: dict[str, dict[str, int]] = {}
    for status, row in kept.items():
        if status not in CONVERSATION_STATUSES:
            continue
        spent = status != "pending"
        totals[status] = {
            "n": row["n"],
            "calls": row["calls"] if spent else 0,
            "tokens_out": row["tokens_out"] if spent else 0,
        }
    return totals


def summary(
    sweep_id: str,
    sweep: dict,
    totals: dict[str, dict[str, int]],
    failed_page: Callable[[int], list[dict]],
    running_owners: Callable[[], list[str]],
) -> dict:
    """`status_summary` from the sweep's document and its totals by status (`status_totals`);
    the first failures and the workers are read only when some failed or run. Also what the
    embedded store's files answer without the store (file_reads.py)."""
    counts = {status: row["n"] for status, row in totals.items()}
    total = sum(counts.values())
    failed = (
        [
            {"id": d["_id"], "cell": d.get("cell_label"), "error": d.get("error")}
            for d in failed_page(50)
        ]
        if counts.get("failed")
        else []
    )
    return {
        "sweep_id": sweep_id,
        "name": sweep.get("name"),
        "experiment_id": sweep["experiment_id"],
        "total": total,
        "counts": {s: counts.get(s, 0) for s in CONVERSATION_STATUSES},
        "complete": counts.get("done", 0) == total,
        "calls": sum(row["calls"] for row in totals.values()),
        "tokens_out": sum(row["tokens_out"] for row in totals.values()),
        "workers": running_owners() if counts.get("running") else [],
        "failed": failed,
    }
