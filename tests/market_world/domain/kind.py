"""The market as the registry sees it (simulator/domain/world.py): its experiment, its run spec
and where its rows are stored (one per run, round and agent in `market_rounds`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from simulator.domain.llm_choice import LLMChoice, WorldExperiment

KIND = "market"
LABEL = "market"
SPEC_FIELDS = ("llms", "market")
ALWAYS_FIELDS: tuple[str, ...] = ()
VERSION_HAS_KIND = True
RUN_UNIT = "round"
ROWS_COLLECTION = "market_rounds"
ROW_UNIT = "round"
AGENTS = ("buyer", "seller")  # agent index 0 and 1
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class MarketSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    item: str = Field(default="a used bicycle", min_length=1, max_length=200)
    rounds: int = Field(default=3, ge=1, le=100)
    buyer_start: float = Field(default=40, ge=0)  # the offers before round 1
    seller_start: float = Field(default=100, ge=0)


class Experiment(WorldExperiment):
    """A buyer and a seller asked each round for a price, given the other's last offer."""

    kind: Literal["market"] = KIND
    market: MarketSettings = Field(default_factory=MarketSettings)


class Spec(BaseModel):
    """One market run with every choice fixed."""

    settings: MarketSettings
    llm: LLMChoice
    seed: int | None = None
    defaults_applied: list[str] = Field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return list(AGENTS)

    @property
    def calls(self) -> int:
        return 2 * self.settings.rounds


def from_stored(data: dict) -> BaseModel:
    return Experiment.model_validate(data)


def after_load(experiment: BaseModel, folder: Path, source: str, marks: dict) -> BaseModel:
    return experiment


def offer_in(reply: str) -> float | None:
    """The reply's first number (None: it has none; the agent keeps its last offer)."""
    found = NUMBER.search(reply.replace(",", ""))
    return float(found.group()) if found else None


def crossed(buyer: float, seller: float) -> bool:
    """A deal: the buyer offers at least what the seller asks."""
    return buyer >= seller
