"""Grid runs as the analysis reads them: the run document and its step rows, a batch at a time.

Every measure reads the same `GridRun`, so they agree on the field, the names, where each agent
stood at each step and which cell a run belongs to. Positions are indexed by time t = 0..T:
t = 0 is the start, t = s the cell after the moves of step s (a run cut short ends early).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from simulator.analysis.stored_run import StoredRun, load_stored_runs
from simulator.worlds.grid.domain.rules import Position, agent_names

BATCH = 50  # runs per read: a 10 x 100 run holds 1,000 rows of a few KB


@dataclass
class GridRun(StoredRun):
    """One stored run: `doc` from `conversations`, `rows` from `grid_steps` (by step, agent)."""

    @property
    def world(self) -> dict:
        return self.spec.get("world") or {}

    @property
    def width(self) -> int:
        return int(self.world.get("width") or 1)

    @property
    def height(self) -> int:
        return int(self.world.get("height") or 1)

    @property
    def torus(self) -> bool:
        return bool(self.world.get("torus", True))

    @property
    def radius(self) -> int:
        return int(self.world.get("radius") or 0)

    @property
    def planned_steps(self) -> int:
        return int(self.world.get("steps") or 0)

    @cached_property
    def names(self) -> list[str]:
        count = int(self.world.get("agents") or len(self.spec.get("start") or []))
        found = {int(r["agent_index"]): str(r["agent"]) for r in self.rows}
        count = max([count, *(i + 1 for i in found)])
        defaults = agent_names(count)
        return [found.get(i, defaults[i]) for i in range(count)]

    @property
    def model(self) -> str | None:
        return (self.spec.get("llm") or {}).get("model")

    @cached_property
    def steps(self) -> list[int]:
        """The steps with stored rows, in order (1-based)."""
        return sorted({int(r["step"]) for r in self.rows})

    @property
    def last_step(self) -> int:
        return self.steps[-1] if self.steps else 0

    @cached_property
    def by_step(self) -> dict[int, list[dict | None]]:
        """Each stored step's rows in agent order; None where an agent's row is missing."""
        table: dict[int, list[dict | None]] = {s: [None] * len(self.names) for s in self.steps}
        for row in self.rows:
            table[int(row["step"])][int(row["agent_index"])] = row
        return table

    @cached_property
    def positions(self) -> list[list[Position]]:
        """Where each agent stood at t = 0..last step (a missing row keeps the agent still)."""
        start = [tuple(p) for p in self.spec.get("start") or []]
        first = self.by_step.get(self.steps[0]) if self.steps else None
        current: list[Position] = []
        for i in range(len(self.names)):
            if i < len(start):
                current.append((int(start[i][0]), int(start[i][1])))
            elif first and first[i]:
                before = first[i]["position_before"]
                current.append((int(before[0]), int(before[1])))
            else:
                current.append((0, 0))
        frames = [list(current)]
        for step in range(1, self.last_step + 1):
            for i, row in enumerate(self.by_step.get(step) or []):
                if row is not None:
                    after = row["position_after"]
                    current[i] = (int(after[0]), int(after[1]))
            frames.append(list(current))
        return frames

    @property
    def cell(self) -> dict:
        """The sweep cell, or the same factors read from a single run's spec."""
        if self.doc.get("cell"):
            return dict(self.doc["cell"])
        return {
            "radius": self.radius,
            "agents": len(self.names),
            "steps": self.planned_steps,
            "llm": self.model,
        }

    @property
    def cell_label(self) -> str:
        label = self.doc.get("cell_label")
        return str(label) if label else " ".join(f"{k}={v}" for k, v in self.cell.items())


def load_runs(store: Any, run_ids: list[str], batch: int = BATCH) -> Iterator[GridRun]:
    """The runs in the order given, `batch` at a time; a fork is read as the whole run it is
    (analysis/stored_run.py)."""
    return load_stored_runs(store, run_ids, store.grid_steps, GridRun, batch)
