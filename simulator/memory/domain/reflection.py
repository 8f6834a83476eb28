"""When an agent reflects, and on what: the parts of reflection that need no model.

The trigger sums the importance of what the agent perceives (observations and chats; its own
thoughts and plans do not count) and fires when the sum reaches the threshold, then starts
again from 0: with records of importance 5 and the paper's 150, on the 30th record. Its state
is four integers (`state()`), and `replay` rebuilds it from a stored stream, so a resumed run
reflects where the uninterrupted one would have. The reference code counts down from its
`importance_trigger_max` and fires at <= 0: the same rule; its 25-agent base sets 250.

The questions are asked over the most recent records (the paper: 100); the insights cite the
numbered records they were shown, and `cited` turns those numbers back into records (numbers
the model made up are dropped, not guessed). The reference code takes the records perceived
since the last reflection, ordered by last access, instead of the 100 most recent; both
presets here keep the paper's window.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from simulator.memory.domain.records import MemoryRecord, is_action


class ReflectionSettings(BaseModel):
    """How much perceived importance brings a reflection, over how many recent records, how
    many questions it asks and how many insights each question yields."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: int = Field(default=150, ge=1)
    recent: int = Field(default=100, ge=1)
    questions: int = Field(default=3, ge=1)
    insights: int = Field(default=5, ge=1)


PAPER_REFLECTION = ReflectionSettings()
REFERENCE_REFLECTION = ReflectionSettings(threshold=250)
REFLECTION_PRESETS: MappingProxyType[str, ReflectionSettings] = MappingProxyType(
    {"paper": PAPER_REFLECTION, "reference": REFERENCE_REFLECTION}
)


@dataclass
class ReflectionTrigger:
    """The running sum of perceived importance since the last reflection."""

    threshold: int = 150
    total: int = 0  # importance summed since the last reflection
    count: int = 0  # records counted since the last reflection
    fired: int = 0  # reflections so far
    last_fired_seq: int | None = None  # the record whose importance made it fire last

    def add(self, importance: int, seq: int | None = None) -> bool:
        """Count one perceived record; True when the sum reaches the threshold (the sum then
        starts again from 0, so the caller reflects exactly once for it)."""
        self.total += importance
        self.count += 1
        if self.total < self.threshold:
            return False
        self.total, self.count = 0, 0
        self.fired += 1
        self.last_fired_seq = seq
        return True

    def add_record(self, record: MemoryRecord) -> bool:
        """`add` for a record of any type: thoughts and plans are not counted (False)."""
        if not record.counts_towards_reflection:
            return False
        return self.add(record.importance, record.seq)

    def state(self) -> dict:
        """Plain integers (and None): what to store for a resume, or compare after one."""
        return asdict(self)

    @classmethod
    def from_state(cls, state: dict) -> ReflectionTrigger:
        return cls(**state)

    @classmethod
    def replay(cls, records: Iterable[MemoryRecord], threshold: int = 150) -> ReflectionTrigger:
        """The trigger as it stood after `records` (in stream order) were added one by one.
        A caller resuming a run compares `last_fired_seq` with its stored thoughts to see
        whether the last reflection was written before the run stopped."""
        trigger = cls(threshold=threshold)
        for record in records:
            trigger.add_record(record)
        return trigger


def recent_for_reflection(records: Sequence[MemoryRecord], n: int = 100) -> list[MemoryRecord]:
    """The `n` most recently made records, oldest first, whatever their type (a plan's
    5-15-minute actions aside: scratch, see records.is_action): what the salient questions
    are asked about (ties in `created` keep stream order)."""
    kept = [r for r in records if not is_action(r.type, r.text)]
    ordered = sorted(kept, key=lambda r: (r.created, r.seq))
    return ordered[-n:] if n > 0 else []


def cited(numbers: Iterable[int], shown: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """The records an insight cites by their number in the list it was shown (0-based, as
    the prompt numbers them), each once, in the order cited; numbers out of range dropped."""
    found: list[MemoryRecord] = []
    seen: set[int] = set()
    for number in numbers:
        if 0 <= number < len(shown) and number not in seen:
            seen.add(number)
            found.append(shown[number])
    return found
