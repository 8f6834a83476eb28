"""What a world tells the house about its sweeps.

Each world's `services/sweeps.py` (the registry's `part(kind, "services.sweeps")`) is a module
with the names of `SweepPart`: its sweep model (what a sweep file of its experiments holds),
the plan, the creation (the sweep document and one stored run per planned run, idempotently),
and how a claimed run of the sweep is run. `llm-sim sweep create`, the sweep runner
(services/sweep_runs.py) and the menus call these through `sweep_part(kind)` and never name a
world.

A world whose sweeps are cells x seeds of its single runs (each run built as `llm-sim run`
builds it) writes the smaller `CellSweepPart` and gets `plan` and `create` from
services/world_sweeps.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pydantic import BaseModel

from simulator.domain.world_sweep import PlannedRun
from simulator.llm.access import LLMAccess
from simulator.services.experiments import ExperimentView
from simulator.services.sweeps import Plan
from simulator.store.store import Store


class RunStored(Protocol):
    """One stored run of a sweep, run or resumed to its end (the world's `services.runs.run`
    with the sweep's experiment snapshot parsed once); the outcome has a `status`."""

    def __call__(
        self,
        store: Store,
        run_id: str,
        llms: LLMAccess,
        *,
        stop: asyncio.Event,
        on_call: Callable[[dict], None],
        lease_owner: str,
        doc: dict,
    ) -> Awaitable[Any]: ...


class SweepPart(Protocol):
    """A world's sweeps (`simulator/worlds/<kind>/services/sweeps.py`)."""

    Spec: type[BaseModel]  # the sweep model: a sweep file's mapping, the CLI's flags over it

    def plan(self, store: Store, view: ExperimentView, spec: Any, owner: str) -> Plan:
        """What the sweep will run, without writing anything; a cell that cannot run is a
        UserError naming it."""

    def create(
        self,
        store: Store,
        view: ExperimentView,
        spec: Any,
        user: str,
        prepared: Plan | None = None,
    ) -> tuple[dict, int]:
        """The sweep (found again when identical) and how many runs were newly stored."""

    def runner(self, snapshot: dict) -> RunStored:
        """How a claimed run of a sweep of this experiment snapshot is run."""


class CellSweepPart(SweepPart, Protocol):
    """A sweep of cells x seeds, each run one of the world's single runs
    (services/world_sweeps.py plans and stores it)."""

    def expand(self, spec: Any, experiment: Any, version: str, owner: str) -> list[PlannedRun]:
        """Every planned run, cell by cell (domain/world_sweep.expand_cells), keyed by the
        experiment's `version` and the `owner`."""

    def build_run(self, view: ExperimentView, cell: Any, seed: int | None) -> Any:
        """The run spec of one run of `cell` (with `calls` and `defaults_applied`, as
        `llm-sim run` builds it); a UserError when the cell cannot run."""

    def axes(self, spec: Any) -> list[str]:
        """The plan's breakdown after the sweep's kind, e.g. ["radius: 0, 5", "repetitions: 2"]
        (world_sweeps.axes writes the usual ones)."""

    def run_document(
        self, view: ExperimentView, planned: PlannedRun, user: str, built: dict[str, Any]
    ) -> dict:
        """The stored fields of one planned run (its place in the sweep is added by the house).
        `built` lives while one sweep is created: what the world builds once per cell."""


def sweep_part(kind: str) -> SweepPart:
    """The world `kind`'s sweeps (imported on first use)."""
    from simulator.worlds import part

    return part(kind, "services.sweeps")  # type: ignore[return-value]


def calls_at_least(part: Any, run: Any) -> bool:
    """Whether a run makes calls no plan can count (a memory stream's ratings and reflections);
    a world answers itself with `calls_at_least(run)` (an opinion network's theory makes none)."""
    own = getattr(part, "calls_at_least", None)
    if own is not None:
        return own(run)
    memory = getattr(run, "memory", None)  # a world without memory settings keeps none
    return bool(memory is not None and memory.is_stream)


def plan_notes(part: Any, run: Any) -> list[str]:
    """The defaults a cell's first run was built with, as the plan says them (a world may say
    them its own way with `plan_notes(run)`)."""
    own = getattr(part, "plan_notes", None)
    return own(run) if own is not None else list(run.defaults_applied)
