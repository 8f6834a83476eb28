"""What an opinion-network agent carries between rounds: its run's `memory:` block.

- summary (the default): every earlier answer of its own, each under the question it
  answered; the prompt as it was before memory blocks existed.
- none: no earlier answer of its own and nothing recalled. Its friends' answers of the round
  before are still shown: that is what it perceives now, not what it remembers (on a graph with
  self-loops the agent is among its friends, as in the reference, so it reads its own last
  answer there).
- stream: no list of its own answers. Before round t >= 1 (before its free-chat message, in
  such a round) each agent recalls its top k records for `recall_query` (the round's news and
  question, and its friends' answers of round t-1), shown under "What you remember" in both of
  the round's prompts; the row of round t names them (`retrieved`). After the round's answers it
  observes what it perceived in that round (`perceived_texts`: the news, its friends' answers it
  was shown, the free-chat messages, its own answer); the keeper rates, embeds and stores them
  and reflects at the threshold. Round 0: each agent's table answer is its stream's first
  record, observed at step 0 before any round is asked. The last round is observed too, so the
  stream holds the whole run (the memory browser shows it), at the cost of calls that no later
  prompt uses.

Resume: the stream is loaded as it stood after the last complete round (round 0 counts as
none: the seeds are observed again, reusing what was stored); the keeper reuses every record
the interrupted round had stored, so nothing stored is rated or embedded again. A retrieval
marks what it returns as accessed (recency); the keeper holds those marks until the round's rows
are stored, because a mark stored by a round that was then cut short would
change what the rerun of that round retrieves (its recall, a reflection's evidence), and so
its prompts: the rerun would send new calls and make records other than those it stored. Each
row names the records whose last access its agent's round moved (`accessed`), and a resumed
run writes the last complete round's marks again before loading (a no-op when they were
written), in case it was killed between the rows and the marks. The chat's memory
(engine/chat_memory.py) does the same per turn.
"""

from __future__ import annotations

from simulator.engine.ports import MemoryShelf
from simulator.engine.step_calls import ActorCalls
from simulator.llm.embeddings import Embedder
from simulator.memory.engine.keeper import MemoryKeeper, Perceived
from simulator.memory.prompting.prompts import recalled_text
from simulator.worlds.network.domain.answers import Answer
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.prompting import memory as texts

NOTHING_RECALLED = "(nothing yet)"  # what a stream with no record shows
Friends = list[tuple[str, Answer]]  # an agent's friends (itself left out) with their answers


class NetworkMemory:
    """The memory of one run's agents: what their prompts show of the past, and their streams."""

    def __init__(
        self,
        spec: NetworkSpec,
        keeper: MemoryKeeper | None = None,
    ) -> None:
        self.spec, self.keeper = spec, keeper

    @classmethod
    def for_run(
        cls,
        run_id: str,
        spec: NetworkSpec,
        shelf: MemoryShelf,
        embedder: Embedder | None,
        counters: dict[str, int],
    ) -> NetworkMemory:
        if not spec.memory.is_stream or spec.llm is None:
            return cls(spec)
        assert embedder is not None, "a memory stream needs an embedder"
        keeper = MemoryKeeper(
            run_id, spec.names, spec.memory, shelf, embedder, spec.llm, counters, spec.seed
        )
        return cls(spec, keeper)

    def accessed(self) -> list[list[str]]:
        """Per agent, the records whose last access this round moved (held so far)."""
        assert self.keeper is not None
        return [[i for i, _ in self.keeper.accessed(a)] for a in range(len(self.spec.agents))]

    def release(self) -> None:
        """Store the held last-access marks: call once the round's rows are stored."""
        if self.keeper is not None:
            self.keeper.store_accesses()

    def own(self, history: list[list[Answer]], i: int) -> list[Answer]:
        """The agent's earlier answers its prompts list: all of them with the summary memory."""
        return [answers[i] for answers in history] if self.spec.memory.kind == "summary" else []

    async def start(
        self,
        calls: ActorCalls,
        history: list[list[Answer]],
        first: list[Answer],
        last_rows: list[dict],
    ) -> None:
        """Load the streams after the stored rounds (the last one's rows' `accessed` marks
        written again first); before round 1 is complete, observe each agent's round-0 answer
        (`first`) as its seed record."""
        if self.keeper is None:
            return
        complete = max(len(history) - 1, 0)
        marks = [i for row in last_rows for i in row.get("accessed") or []]
        if complete and marks:
            self.keeper.store_accesses([(i, self.keeper.minute(complete)) for i in marks])
        if complete:
            self.keeper.restore_counts(last_rows[0].get("memory_counters") if last_rows else None)
        self.keeper.load(complete)
        if len(history) <= 1:
            seeds = [
                Perceived(i, "observation", texts.own_answer(0, a)) for i, a in enumerate(first)
            ]
            await self.keeper.observe(calls, 0, seeds)

    async def recall(self, t: int, friends: list[Friends]) -> tuple[list[str | None], list[list]]:
        """Each agent's "What you remember" text (None: no such section) and the ids shown."""
        if self.keeper is None:
            return [None] * len(friends), [[] for _ in friends]
        queries = [texts.recall_query(self.spec.scenario, t, shown) for shown in friends]
        found = await self.keeper.recall(t, queries)
        return (
            [recalled_text(records, NOTHING_RECALLED) for records in found],
            [[r.id for r in records] for records in found],
        )

    async def perceive(
        self,
        calls: ActorCalls,
        t: int,
        answers: list[Answer],
        friends: list[Friends],
        said: list[str] | None,
        heard: list[dict[str, str] | None],
    ) -> None:
        """Round t as records of each agent's stream (nothing without a stream)."""
        if self.keeper is None:
            return
        perceived = [
            Perceived(i, kind, text)  # type: ignore[arg-type]
            for i, answer in enumerate(answers)
            for kind, text in texts.perceived_texts(
                self.spec.scenario,
                t,
                answer,
                friends[i],
                None if said is None else said[i],
                heard[i],
            )
        ]
        await self.keeper.observe(calls, t, perceived)
