"""Analysis of grid runs (the 2D community of Takata et al. 2024; shared/specs/takata-grid.md).

One module per measure (moves, clusters, hashtags, text), the tidy tables and their export
(table), and the entry point `grid_measures(store, run_ids)` (measures). Modules that need an
extra (scikit-learn, the packaged sentence model) import it only when called.
"""

from __future__ import annotations

from simulator.worlds.grid.analysis.measures import PACKAGED, SUMMARY, analyse_run, grid_measures
from simulator.worlds.grid.analysis.runs import GridRun, load_runs
from simulator.worlds.grid.analysis.table import GRID_TABLES, export_grid

__all__ = [
    "GRID_TABLES",
    "PACKAGED",
    "SUMMARY",
    "GridRun",
    "analyse_run",
    "export_grid",
    "grid_measures",
    "load_runs",
]
