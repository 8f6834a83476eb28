"""The group chat as the registry sees it (simulator/domain/world.py)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import ConversationSpec as Spec

KIND = "chat"
LABEL = "group chat"
SPEC_FIELDS = (
    "starting_message",
    "llms",
    "roles",
    "shared_sections",
    "summarizer_sections",
    "memory",
)
ALWAYS_FIELDS: tuple[str, ...] = ()
VERSION_HAS_KIND = False  # chats were hashed before there were other worlds
RUN_UNIT = "message"

__all__ = ["Experiment", "Spec"]


def from_stored(data: dict) -> BaseModel:
    return Experiment.from_stored({k: v for k, v in data.items() if k != "kind"})


def after_load(experiment: BaseModel, folder: Path, source: str, marks: dict) -> BaseModel:
    return experiment


ROWS_COLLECTION: str | None = None  # a chat stores messages (its transcript), not rows
ROW_UNIT: str | None = None
