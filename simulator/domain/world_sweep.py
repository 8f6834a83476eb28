"""What grid and network sweeps share (pure): the seeds of a cell's runs, and the expansion of
cells into runs with stable keys (the same owner, experiment version, cell and seed: the same
stored run, so re-creating a sweep adds nothing)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, Field

from simulator.domain.ids import content_hash
from simulator.domain.limits import MAX_SEED, MAX_SWEEP_CONVERSATIONS

Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]


class SweepSeeds(BaseModel):
    """A `seeds` list is an axis; without it, `repetitions` runs per cell get seeds `seed`,
    `seed + 1`, ... (none when no `seed` is given: not reproducible, and said so in the plan)."""

    seeds: list[Seed] = Field(default_factory=list, max_length=10_000)
    repetitions: int = Field(default=1, ge=1, le=10_000)
    seed: Seed | None = None

    def check_seeds(self) -> None:
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds lists a value twice; list each once")
        if self.seeds and (self.repetitions != 1 or self.seed is not None):
            raise ValueError(
                "seeds lists the seed of every run: leave repetitions and seed out with it "
                "(or drop seeds and give seed and repetitions)"
            )

    def check_sweep(self, axes: Iterable[str]) -> None:
        """Each axis lists each value once, the seeds are consistent, and the sweep is not
        larger than a sweep may be (with the experiment's one model when it lists none)."""
        for axis in axes:
            values = getattr(self, axis)
            if len(set(values)) != len(values):
                raise ValueError(f"{axis} lists a value twice; list each once")
        self.check_seeds()
        size = self.size(1)
        if size > MAX_SWEEP_CONVERSATIONS:
            raise ValueError(
                f"the sweep expands to {size:,} runs, more than {MAX_SWEEP_CONVERSATIONS:,}"
            )

    def size(self, llms: int) -> int:
        """Runs of the sweep when the experiment gives `llms` models and the sweep lists none."""
        raise NotImplementedError

    def runs_per_cell(self) -> int:
        return len(self.seeds) or self.repetitions

    def run_seeds(self) -> list[int | None]:
        if self.seeds:
            return list(self.seeds)
        if self.seed is None:
            return [None] * self.repetitions
        return [(self.seed + i) % (MAX_SEED + 1) for i in range(self.repetitions)]


class Cell(Protocol):
    def as_dict(self) -> dict: ...

    def label(self) -> str: ...


@dataclass(frozen=True)
class PlannedRun:
    cell: Any  # the sweep kind's cell (GridCell, NetworkCell)
    cell_key: str
    repetition: int
    seed: int | None
    key: str  # the same owner, experiment version, cell and seed: the same stored run


def expand_cells(
    cells: Iterable[Cell], seeds: list[int | None], version: str, owner: str, prefix: str
) -> list[PlannedRun]:
    """Every run, cell by cell; a cell's runs in seed order."""
    planned = []
    for cell in cells:
        cell_key = content_hash({"v": version, "cell": cell.as_dict()}, 16)
        for repetition, seed in enumerate(seeds):
            identity = {"cell": cell_key, "seed": seed, "rep": repetition, "owner": owner}
            key = prefix + content_hash(identity, 24)
            planned.append(PlannedRun(cell, cell_key, repetition, seed, key))
    return planned
