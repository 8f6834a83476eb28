"""The memory stream in the group chat (`memory: {kind: stream}`): what a speaker recalls before
its turn, and what every agent remembers of each message.

The loop's step is one turn, and the keeper's step is the turn's number from 1 (a message's
`seq` + 1), so the records of turn t are made at simulated minute t x minutes_per_step, and the
memory browser's step n is the chat's message n.

A turn: the speaker recalls the top k records for its query (the day's last message as
`Name: text`, or the day's opening for the day's first turn), shown at the end of its system
prompt under "What you remember"; it speaks; every agent observes the message as a record
("I said: ..." for the speaker, "Name said: ..." for the others; an empty message makes none),
rated, embedded and reflected on by the keeper; then the message is stored, naming the records
its prompt showed (`retrieved`, best first) and every record whose last access the turn moved
(`accessed`: the recall's and the reflections'). The records go in before the message, so a
stored message means its turn's records are complete.

Last accesses decide recency, so a resumed turn must recall from exactly the accesses that stood
before it: the keeper holds the turn's touches and writes them only after the turn's
message; on resume the last stored message's `accessed` ids are written again (a no-op when
they were written), then the keeper loads the streams as of the stored turns (memory_keeper.py:
a cut turn's records are reused, never re-rated or re-embedded). The resumed turn's prompt is
then the one the killed run sent, and the ledger answers it.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.engine.step_calls import ActorCalls
from simulator.memory.domain.records import MemoryRecord
from simulator.memory.engine.keeper import MemoryKeeper, Perceived
from simulator.worlds.chat.prompting.transcript import Line


@dataclass(frozen=True)
class Recalled:
    """What a speaker's prompt shows of its stream at one turn."""

    records: list[MemoryRecord]

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.records]

    @property
    def texts(self) -> list[str]:
        return [r.text for r in self.records]


def turn_query(opening: str, lines: list[Line]) -> str:
    """What a speaker's recall looks for: the day's last message, or the day's opening."""
    if not lines:
        return opening
    return f"{lines[-1].speaker}: {lines[-1].text}"


class ChatMemory:
    """The agents' memory streams of one chat run, turn by turn (see the module docstring)."""

    def __init__(self, keeper: MemoryKeeper) -> None:
        self.names = keeper.names
        self.keeper = keeper

    def load(self, turns: int, last_message: dict | None) -> None:
        """The streams as they stood after `turns` stored turns (the last one's `accessed`
        written again, in case the run was killed before it wrote them)."""
        if last_message and last_message.get("accessed"):
            minute = self.keeper.minute(int(last_message["seq"]) + 1)
            self.keeper.store_accesses([(i, minute) for i in last_message["accessed"]])
        self.keeper.restore_counts((last_message or {}).get("memory_counters"))
        self.keeper.load(turns)

    async def recall(self, agent: int, turn: int, query: str) -> Recalled:
        """The speaker's top k records for `query` at turn `turn` (from 1), best first."""
        [found] = await self.keeper.recall_pairs(self.keeper.minute(turn), [(agent, query)])
        return Recalled(found)

    async def observe(self, calls: ActorCalls, turn: int, speaker: int, text: str) -> None:
        """Every agent's record of the message (none for an empty one), with reflections."""
        if not text:
            return
        heard = f"{self.names[speaker]} said: {text}"
        perceived = [
            Perceived(i, "chat", f"I said: {text}" if i == speaker else heard)
            for i in range(len(self.names))
        ]
        await self.keeper.observe(calls, turn, perceived)

    def accessed(self) -> list[str]:
        """The ids whose last access this turn moved so far (stored on its message)."""
        return [record_id for record_id, _ in self.keeper.accessed()]

    def stored(self, turn: int) -> None:
        """The turn's message is stored: write the last accesses it moved."""
        self.keeper.store_accesses()
