"""What a world tells the domain: its models and how they are stored.

Each world's `domain/kind.py` is a module with these names (the registry's
`part(kind, "domain.kind")`); the store, the services and the menus read them instead of naming
a world.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pydantic import BaseModel


class WorldDomain(Protocol):
    KIND: str
    LABEL: str  # what the menus and listings call one of its experiments ("2D community")
    Experiment: type[BaseModel]  # the validated experiment (YAML, menus, store)
    Spec: type[BaseModel]  # one run with every choice fixed (stored whole on the run)
    SPEC_FIELDS: tuple[str, ...]  # the experiment fields stored under `spec` and hashed
    ALWAYS_FIELDS: tuple[str, ...]  # of the later-added fields, those hashed even at default
    VERSION_HAS_KIND: bool  # the version hash covers `kind` (False: chats from before worlds)
    RUN_UNIT: str  # what one step of its runs is called ("message", "step", "round")

    def from_stored(self, data: dict) -> BaseModel:
        """The experiment from a stored document's fields (kind, name, note, favourite, spec)."""

    def after_load(self, experiment: BaseModel, folder: Path, source: str, marks: dict):
        """The experiment read from a file in `folder`, with what it names read too (a
        network's agents table and graphs); most worlds return it as it is."""

    # the store collection of its runs' rows ("grid_steps"), or None for a world that stores
    # messages (the chat's transcript); a fork reads the rows before its fork point from there
    ROWS_COLLECTION: str | None
    ROW_UNIT: str | None  # the row field that counts them, the unit a fork branches at ("step")


def domain_of(kind: str) -> WorldDomain:
    """The world `kind`'s domain part (imported on first use)."""
    from simulator.worlds import part

    return part(kind, "domain.kind")  # type: ignore[return-value]


def experiment_kind(experiment: BaseModel) -> str:
    """The world of a validated experiment (a chat's model has no `kind` field)."""
    from simulator.worlds import DEFAULT_KIND

    return str(getattr(experiment, "kind", None) or DEFAULT_KIND)
