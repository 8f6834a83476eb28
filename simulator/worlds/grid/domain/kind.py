"""The 2D community as the registry sees it (simulator/domain/world.py)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from simulator.worlds.grid.domain.experiment import GRID_FIELDS, GRID_KIND
from simulator.worlds.grid.domain.experiment import GridExperiment as Experiment
from simulator.worlds.grid.domain.experiment import GridSpec as Spec

KIND = GRID_KIND
LABEL = "2D community"
SPEC_FIELDS = GRID_FIELDS
ALWAYS_FIELDS = ("memory",)  # a grid's memory has been hashed since it was added
VERSION_HAS_KIND = True
RUN_UNIT = "step"

__all__ = ["Experiment", "Spec"]


def from_stored(data: dict) -> BaseModel:
    return Experiment.from_stored(data)


def after_load(experiment: BaseModel, folder: Path, source: str, marks: dict) -> BaseModel:
    return experiment


ROWS_COLLECTION = "grid_steps"  # its runs' rows, one per agent and step
ROW_UNIT = "step"
