"""Interviews after a run's last step, and where a gathering was: the `probe:` block. Pure data.

Park et al. (2023) measured their party by interviewing every agent at the end (does it know
of the party?) and every pair (does it know the other?), then checked each "yes" against the
agent's memory so that a hallucinated yes is not counted; attendance is who was at the place
at the time. `probe.news` and `probe.relationships` are the interviews (model calls made after
the last step, stored with the run); `probe.attendance` needs no call: it is read from where
the agents stood. The measures are analysis/grid/party.py's.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

CLOCK = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


class NewsProbe(BaseModel):
    """One question every agent is asked after the last step; a yes counts as knowing only
    when the agent's memory mentions one of the keywords."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000)
    keywords: list[str] = Field(min_length=1, max_length=20)

    @field_validator("keywords")
    @classmethod
    def _words(cls, value: list[str]) -> list[str]:
        words = [w.strip() for w in value]
        if any(not w for w in words):
            raise ValueError("keywords must not be empty strings")
        return words


class AttendanceProbe(BaseModel):
    """A gathering: agents within `radius` (the grid's distance) of `place` at a step that
    starts between `start` and `end` (simulated clock, day `day`) attended."""

    model_config = ConfigDict(extra="forbid")

    place: tuple[int, int]
    radius: int = Field(ge=0, le=2000)
    start: str
    end: str
    day: int = Field(default=1, ge=1, le=10_000)

    @field_validator("start", "end")
    @classmethod
    def _clock(cls, value: str) -> str:
        if not CLOCK.match(value.strip()):
            raise ValueError(f"{value!r} is not a time of day; write it as HH:MM, e.g. 17:00")
        return value.strip()

    @model_validator(mode="after")
    def _ordered(self) -> AttendanceProbe:
        if minutes_of(self.end) <= minutes_of(self.start):
            raise ValueError(f"end {self.end} must come after start {self.start}")
        return self


class Probe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    news: NewsProbe | None = None
    relationships: bool = False  # ask every agent about every other agent
    attendance: AttendanceProbe | None = None

    @property
    def asks(self) -> bool:
        """Whether the probe makes calls (interviews) after the last step."""
        return self.news is not None or self.relationships

    def calls(self, agents: int) -> int:
        return (agents if self.news else 0) + (agents * (agents - 1) if self.relationships else 0)


def minutes_of(clock: str) -> int:
    """Minutes after midnight of an HH:MM time."""
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


def parse_yes_no(reply: str) -> bool | None:
    """An interview answer's first word: True for yes, False for no, None for neither (the
    caller counts it as a fallback and reads it as no)."""
    found = YES_NO.match((reply or "").strip())
    return None if found is None else found.group(1).lower() == "yes"


def mentions(text: str, words: list[str]) -> bool:
    """Whether `text` names any of `words` as a whole word, in any case ("agent1" is not
    found in "agent10")."""
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text, re.IGNORECASE) for w in words if w)
