"""The 2D community's replays and forks (simulator/services/fork_parts.py): a grid run forks at
a step (services/world_forks.py); its one model is the spec's `llm` (the house's default)."""

from __future__ import annotations

from simulator.worlds.grid.domain.experiment import GridSpec
from simulator.worlds.grid.engine.run import resume_state


def last_complete(spec: GridSpec, rows: list[dict]) -> int:
    """Steps count from 1; before step 1 is the start (0: no complete step)."""
    state, _ = resume_state(spec, rows)
    return state.step
