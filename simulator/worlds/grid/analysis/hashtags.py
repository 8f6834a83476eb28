"""Hashtags in messages: who coined each, how far it spread and how long it lived.

The paper watches hashtags (#cooperation, …) spread within clusters and persist for tens of
steps. Our reading where it is silent: a hashtag is `#` followed by word characters (`#\\w+`),
compared case-insensitively (`#Cooperation` is `#cooperation`, shown as first written);
`lifespan` is the longest run of consecutive steps in which at least one message carries it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from simulator.worlds.grid.analysis.runs import GridRun

HASHTAG = re.compile(r"#\w+")


def hashtags_in(text: str | None) -> list[str]:
    """The distinct hashtags of a text, lower-cased, in order of first appearance."""
    return list(dict.fromkeys(tag.lower() for tag in HASHTAG.findall(text or "")))


def longest_run(steps: set[int]) -> int:
    """The longest stretch of consecutive integers in `steps`."""
    best = 0
    for step in steps:
        if step - 1 in steps:
            continue
        length = 1
        while step + length in steps:
            length += 1
        best = max(best, length)
    return best


@dataclass
class Tag:
    tag: str
    shown: str  # as first written
    first_step: int
    first_user: str
    steps: set[int] = field(default_factory=set)
    users: dict[str, None] = field(default_factory=dict)  # in order of first use
    uses: int = 0

    def as_dict(self) -> dict:
        return {
            "tag": self.shown,
            "first_step": self.first_step,
            "first_user": self.first_user,
            "agents": len(self.users),
            "users": list(self.users),
            "uses": self.uses,
            "steps": sorted(self.steps),
            "lifespan": longest_run(self.steps),
        }


def hashtag_measures(run: GridRun) -> dict:
    """`tags`: one entry per hashtag (first step, first user — the lowest agent at that step —,
    agents that used it, uses, steps, lifespan), by first step; `unique_per_step`: distinct
    hashtags in each stored step's messages (index 0 is step 1)."""
    tags: dict[str, Tag] = {}
    unique_per_step: list[int] = []
    for step in range(1, run.last_step + 1):
        seen: set[str] = set()
        for row in run.by_step.get(step) or []:
            if row is None:
                continue
            agent = str(row["agent"])
            written: dict[str, str] = {}
            for raw in HASHTAG.findall(str(row.get("message") or "")):
                written.setdefault(raw.lower(), raw)
            for key, raw in written.items():  # once per message, however often it repeats
                tag = tags.setdefault(key, Tag(key, raw, step, agent))
                tag.steps.add(step)
                tag.users.setdefault(agent, None)
                tag.uses += 1
                seen.add(key)
        unique_per_step.append(len(seen))
    listed = [tag.as_dict() for tag in sorted(tags.values(), key=lambda t: t.first_step)]
    lifespans = [t["lifespan"] for t in listed]
    return {
        "tags": listed,
        "unique_per_step": unique_per_step,
        "unique": len(listed),
        "longest_lifespan": max(lifespans, default=0),
        "mean_lifespan": sum(lifespans) / len(lifespans) if lifespans else None,
        "widest_spread": max((t["agents"] for t in listed), default=0),
    }
