"""The estimate of a sweep or a run as `sweep create`, `run --dry-run`, the menus' plans and
the header of `sweep run` print it (services/estimates.py makes it)."""

from __future__ import annotations

from typing import Any

from simulator.cli.context import AppContext
from simulator.services import estimates
from simulator.services.experiments import ExperimentView


def sweep_estimate(app: AppContext, view: ExperimentView, spec: Any, plan: Any) -> dict | None:
    """The sweep's estimate, None when its world makes none; a price file that cannot be read
    is the researcher's to fix (exit status 2), never a silent $0."""
    return estimates.sweep_estimate(app.store, view, spec, plan.planned)


def print_estimate(app: AppContext, estimate: dict | None, concurrency: int | None = None) -> None:
    if estimate is None:
        app.console.print(
            "estimate: none (this world does not estimate its runs)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return
    for line in estimates.estimate_lines(estimate, concurrency):
        app.console.print(line, markup=False, highlight=False)  # wrapped at words


def print_stored_estimate(app: AppContext, sweep: dict, concurrency: int) -> None:
    """The header line of a sweep's run: what it was estimated at when it was created."""
    estimate = sweep.get("estimate")
    if not estimate:
        return
    for line in estimates.estimate_lines(estimate, concurrency)[:2]:
        app.err.print(
            f"{line} (made when the sweep was created)",
            markup=False,
            highlight=False,
        )
