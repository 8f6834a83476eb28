"""Grid steps: one row per (run, step, agent) of a 2D community run (world_rows.py).

Field by field (DESIGN "Worlds"): `position_before`/`position_after` [x, y], `message`,
`recipients` (names that heard this agent's message), `heard_from` (names whose messages it
read), `memory` (after this step), `move_reply` (the raw reply), `move`, `move_fallback` (the
parse found no command).
"""

from __future__ import annotations

from simulator.store.repositories.world_rows import RowsLayout

GRID_STEPS = RowsLayout("grid_steps", "step", "{run}-s{unit:05d}-a{agent:04d}")
