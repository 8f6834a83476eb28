"""A stored world run as the analysis reads it: its document and its rows (grid steps,
network rounds); each world's run adds what its measures need (its `cell` and `cell_label`).

`load_stored_runs` reads runs a batch at a time, a fork read as the whole run it is."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from simulator.domain.ids import content_hash
from simulator.store import lineage

Run = TypeVar("Run", bound="StoredRun")


@dataclass
class StoredRun:
    doc: dict  # from `conversations`
    rows: list[dict]  # the world's rows, in stored order

    @property
    def id(self) -> str:
        return str(self.doc["_id"])

    @property
    def spec(self) -> dict:
        return self.doc.get("spec") or {}

    @property
    def cell(self) -> dict:
        """The sweep cell (a world reads the same factors from a single run's spec)."""
        return dict(self.doc.get("cell") or {})

    @property
    def cell_key(self) -> str:
        return str(self.doc.get("cell_key") or content_hash(self.cell, 16))

    @property
    def repetition(self) -> Any:
        return self.doc.get("repetition")

    @property
    def status(self) -> str | None:
        return self.doc.get("status")


def load_stored_runs(
    store: Any,
    run_ids: list[str],
    rows_of: Any,
    make: Callable[[dict, list[dict]], Run],
    batch: int,
) -> Iterator[Run]:
    """The runs in the order given, `batch` at a time (documents and rows in two reads; rows
    from the world's collection `rows_of`); ids the store does not hold are skipped. A fork
    (store/lineage.py) is read as the whole run it is: the parent's rows before its fork point,
    then its own."""
    for start in range(0, len(run_ids), batch):
        docs = store.conversations.get_many(run_ids[start : start + batch])
        rows = rows_of.for_runs([d["_id"] for d in docs])
        for doc in docs:
            # a fork's run is its shared rows (read from its parent) and then its own
            shared = lineage.world_prefix(store, doc).rows
            yield make(doc, shared + rows.get(doc["_id"], []))
