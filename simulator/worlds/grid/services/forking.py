"""The 2D community's replays and forks (simulator/services/fork_parts.py): a grid run forks at
a step (services/world_forks.py); its one model is the spec's `llm` (the house's default)."""

from __future__ import annotations

from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.store.store import Store
from simulator.worlds.grid.domain.experiment import GridSpec
from simulator.worlds.grid.engine.run import resume_state
from simulator.worlds.grid.services import runs as grid_runs

run = grid_runs.run


def create(store: Store, view: ExperimentView, spec: GridSpec, user: str, extra: dict) -> dict:
    return runs.create(store, grid_runs.run_document(view, spec, user, extra), user)


def last_complete(spec: GridSpec, rows: list[dict]) -> int:
    """Steps count from 1; before step 1 is the start (0: no complete step)."""
    state, _ = resume_state(spec, rows)
    return state.step
