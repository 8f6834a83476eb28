"""The opinion network as the registry sees it (simulator/domain/world.py)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from simulator.worlds.network.domain.experiment import NETWORK_FIELDS, NETWORK_KIND
from simulator.worlds.network.domain.experiment import NetworkExperiment as Experiment
from simulator.worlds.network.domain.experiment import NetworkSpec as Spec
from simulator.worlds.network.domain.experiment_files import check_experiment_files

KIND = NETWORK_KIND
LABEL = "opinion network"
SPEC_FIELDS = NETWORK_FIELDS
ALWAYS_FIELDS: tuple[str, ...] = ()
VERSION_HAS_KIND = True
RUN_UNIT = "round"

__all__ = ["Experiment", "Spec"]


def from_stored(data: dict) -> BaseModel:
    return Experiment.from_stored(data)


def after_load(experiment: BaseModel, folder: Path, source: str, marks: dict) -> BaseModel:
    """Its agents table, scenario and graph files read (relative paths from the file's
    folder, stored absolute)."""
    return check_experiment_files(experiment, folder, source, marks)  # type: ignore[arg-type]


ROWS_COLLECTION = "network_rounds"  # its runs' rows, one per agent and round
ROW_UNIT = "round"
