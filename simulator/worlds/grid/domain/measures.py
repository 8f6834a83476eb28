"""What the grid's analysis reads from an experiment (`measures:`): nothing here changes a run.

Takata et al. (2024) count hallucinations: objects agents talk about that their empty field does
not contain (their Fig. 1B follows "trees" spreading between neighbours). The paper publishes no
word list, so `DEFAULT_HALLUCINATION_WORDS` is ours: landmarks and objects of a landscape that a
bare 50 x 50 grid has none of, leaving out the prompts' own words (field, position, edge).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer

DEFAULT_HALLUCINATION_WORDS: tuple[str, ...] = (
    "tree",
    "forest",
    "wood",
    "cave",
    "hill",
    "mountain",
    "valley",
    "river",
    "lake",
    "pond",
    "ocean",
    "sea",
    "beach",
    "island",
    "waterfall",
    "desert",
    "rock",
    "flower",
    "garden",
    "treasure",
    "building",
    "house",
    "castle",
    "tower",
    "village",
    "town",
    "city",
    "road",
    "bridge",
)
MAX_WORDS = 500
_WORD = re.compile(r"[a-z][a-z' -]*[a-z]|[a-z]")


class GridMeasures(BaseModel):
    """Settings of the grid's measures. `hallucination_words` None: the default list."""

    model_config = ConfigDict(extra="forbid")

    hallucination_words: list[str] | None = Field(default=None, min_length=1, max_length=MAX_WORDS)

    @field_validator("hallucination_words")
    @classmethod
    def _words(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        words: list[str] = []
        for i, raw in enumerate(value):
            word = " ".join(raw.lower().split())
            if not _WORD.fullmatch(word) or len(word) > 60:
                raise ValueError(
                    f"hallucination_words[{i}] = {raw!r} is not a word: give letters (spaces, "
                    "hyphens and apostrophes inside), at most 60 characters, e.g. tree or "
                    "treasure chest"
                )
            words.append(word)
        return list(dict.fromkeys(words))

    @model_serializer(mode="wrap")
    def _without_unset(self, handler: Any) -> dict:
        """An unset list stays out of the dump (the default is applied at analysis time)."""
        data = handler(self)
        if self.hallucination_words is None:
            data.pop("hallucination_words", None)
        return data

    @property
    def words(self) -> list[str]:
        """The list to count: the given one, else the default."""
        if self.hallucination_words is None:
            return list(DEFAULT_HALLUCINATION_WORDS)
        return list(self.hallucination_words)

    def resolved(self) -> GridMeasures:
        """Every value filled (what a new run stores on its spec)."""
        return GridMeasures(hallucination_words=self.words)


def resolved_measures(measures: GridMeasures | None) -> GridMeasures:
    return (measures or GridMeasures()).resolved()


def words_of_spec(spec: dict) -> list[str]:
    """The hallucination words a stored run spec names, else the default (runs stored before
    the list was kept on the spec)."""
    stored = (spec.get("measures") or {}).get("hallucination_words")
    return [str(w) for w in stored] if stored else list(DEFAULT_HALLUCINATION_WORDS)
