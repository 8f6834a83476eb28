"""One memory of one agent: what it is, when it happened, how much it matters, what it rests on.

Time is simulated, in whole minutes since the run's start (`created`, `last_accessed`): a
world's clock decides how many minutes a step is, the paper's recency decays per simulated
hour (minutes / 60), and integers compare the same on every store (DESIGN: times that queries
compare are integers). `seq` is the record's place in its agent's stream (0, 1, 2, ...): with
the run and the agent it makes the id, so a resumed run that stores record 17 again writes the
same id and the store keeps one copy (`memory_id`, like `round_id` for network rounds).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

MemoryType = Literal["observation", "chat", "thought", "plan"]
MEMORY_TYPES: tuple[str, ...] = ("observation", "chat", "thought", "plan")
# the types whose importance counts towards the next reflection: what the agent perceived,
# not what it thought (the paper sums "the latest events perceived"; the reference code's
# perceive.py decrements its trigger for each new event, a conversation entering as the event
# of it, its chat node uncounted; our chat lines stand for those events)
PERCEIVED_TYPES: tuple[str, ...] = ("observation", "chat")
# the types that may rest on other records (a plan made after a chat cites the chat)
CITING_TYPES: tuple[str, ...] = ("thought", "plan")
MIN_IMPORTANCE, MAX_IMPORTANCE = 1, 10
# a plan's third level, "HH:MM-HH:MM what" (engine/memory_planning.py): the reference code
# keeps these 5-15-minute actions in the persona's scratch (f_daily_schedule), never as nodes
# of its associative memory, so here they are stored (for the browser and a resumed run) but
# not rated, never retrieved and never reflected on
ACTION_TEXT = re.compile(r"^\d{2}:\d{2}-\d{2}:\d{2} ", re.S)


def is_action(memory_type: str, text: str) -> bool:
    """Whether a record is a plan's 5-15-minute action (scratch, not memory: see above)."""
    return memory_type == "plan" and ACTION_TEXT.match(text) is not None


MINUTES_PER_HOUR = 60
SEQ_DIGITS = 6  # ids sort in stream order up to a million records per agent


def memory_id(run_id: str, agent_index: int, seq: int) -> str:
    """`{run}-m{agent:05d}-{seq:06d}`: an agent's records are one contiguous `_id` range, in
    stream order (the embedded store reads them by range, never by scanning)."""
    return f"{run_id}-m{agent_index:05d}-{seq:0{SEQ_DIGITS}d}"


def agent_id_range(run_id: str, agent_index: int) -> tuple[str, str]:
    """[low, high) bounds of the `_id`s of one agent's records in one run."""
    prefix = f"{run_id}-m{agent_index:05d}-"
    return prefix, prefix[:-1] + "."  # "." follows "-"


class MemoryRecord(BaseModel):
    """A memory as stored. `last_accessed` changes when retrieval returns the record; nothing
    else does after it is made. `depth`: 0 for what was perceived or planned, 1 + the deepest
    evidence for a thought (reflections on reflections grow deeper)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    run_id: str
    agent_index: int = Field(ge=0)
    seq: int = Field(ge=0)
    type: MemoryType
    text: str
    created: int = Field(ge=0, description="simulated minutes since the run's start")
    last_accessed: int = Field(ge=0, description="simulated minutes since the run's start")
    importance: int = Field(ge=MIN_IMPORTANCE, le=MAX_IMPORTANCE)
    importance_fallback: bool = False  # the model's rating did not parse: the fallback was used
    evidence: list[str] = Field(default_factory=list)  # ids of the records a thought rests on
    depth: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> MemoryRecord:
        if self.id != memory_id(self.run_id, self.agent_index, self.seq):
            raise ValueError(
                f"id {self.id!r} is not the id of ({self.run_id}, {self.agent_index}, {self.seq})"
            )
        if self.last_accessed < self.created:
            raise ValueError("last_accessed is before created")
        if self.type not in CITING_TYPES and self.evidence:
            raise ValueError(f"a {self.type} cites no evidence; only thoughts and plans do")
        return self

    @property
    def counts_towards_reflection(self) -> bool:
        return self.type in PERCEIVED_TYPES


def depth_of(evidence: Iterable[MemoryRecord]) -> int:
    """A thought's depth: 1 + the deepest record it cites (1 when it cites none)."""
    return 1 + max((r.depth for r in evidence), default=0)


def new_record(
    run_id: str,
    agent_index: int,
    seq: int,
    type: MemoryType,
    text: str,
    created: int,
    importance: int,
    *,
    importance_fallback: bool = False,
    evidence: Iterable[MemoryRecord] = (),
) -> MemoryRecord:
    """A fresh record, accessed when made, with its id and depth derived: a thought is 1 + its
    deepest evidence; a plan is that when it cites something, else 0, like a perception."""
    cited = list(evidence)
    return MemoryRecord(
        id=memory_id(run_id, agent_index, seq),
        run_id=run_id,
        agent_index=agent_index,
        seq=seq,
        type=type,
        text=text,
        created=created,
        last_accessed=created,
        importance=importance,
        importance_fallback=importance_fallback,
        evidence=[r.id for r in cited],
        depth=depth_of(cited) if type == "thought" or cited else 0,
    )


def hours_between(earlier: int, later: int) -> float:
    """Simulated hours from `earlier` to `later` (minutes), never negative."""
    return max(later - earlier, 0) / MINUTES_PER_HOUR
