"""A stored world run as the analysis reads it: its document and its rows (grid steps,
network rounds); each world's run adds what its measures need."""

from __future__ import annotations

from dataclasses import dataclass


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
