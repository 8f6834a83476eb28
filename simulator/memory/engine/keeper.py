"""The memory streams of one run's agents, as a world's step uses them: observe, recall, reflect.

A world hands the keeper what each agent perceived (`observe`), asks what each one recalls for
a query (`recall`), and the keeper does the rest: one importance call per new record (purpose
`memory_importance`, temperature 0), one embedding batch per step, the records stored with
deterministic ids, and a reflection (`memory_questions`, then per question `memory_insights`,
each insight rated and stored as a thought citing its evidence) for every agent whose summed
importance reached the threshold. Every call goes through the step's ActorCalls, so the ledger
holds it and a resumed run replays it.

Resume: `load(complete_step)` rebuilds each stream from the stored records made up to the end
of the last complete step; records of the step that was cut short are kept aside, and when the
rerun of that step makes the same record again (same id, same text) its stored importance and
vector are used: nothing stored is re-rated or re-embedded. Last accesses (recency) are held
in the keeper until the world has stored its step's rows (`accessed`, `store_accesses`), and
the world stores them on those rows too, so a resumed run writes the last complete step's
again before `load`: the rerun of a cut step retrieves from exactly what the first run saw.

Embeddings: every text goes through `embed`, which asks the run's recorder for a ledger of the
requests the embedder sends (a row each, priced, under the spend cap: engine/embedding_ledger.py;
texts the process cache knows send nothing). A resumed run first takes the vectors it already
has, the stored records' and those the ledger kept for recall queries, so nothing embedded
before the stop is sent, or counted, again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.engine.ports import MemoryShelf
from simulator.engine.step_calls import ActorCall, ActorCalls, placed_params
from simulator.llm.embeddings import Embedder
from simulator.memory.domain.agent_memory import AgentMemory
from simulator.memory.domain.parsers import (
    ImportanceRating,
    parse_importance,
    parse_insights,
    parse_questions,
)
from simulator.memory.domain.records import (
    MIN_IMPORTANCE,
    MemoryRecord,
    MemoryType,
    is_action,
    memory_id,
)
from simulator.memory.domain.reflection import REFLECTION_PRESETS, cited
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.engine.planning import PLANNING_COUNTERS, DayPlanner
from simulator.memory.engine.reactions import react
from simulator.memory.engine.run_embeddings import RunEmbeddings
from simulator.memory.prompting import prompts as mp

IMPORTANCE_FALLBACKS = "importance_fallbacks"  # counter: ratings that did not parse (4 used)
REFLECTIONS = "reflections"  # counter: reflections run
INSIGHT_FALLBACKS = "insight_fallbacks"  # counter: insights that cited no evidence
RATING = GenerationParams(temperature=0.0, max_tokens=8)
UNRATED = ImportanceRating(MIN_IMPORTANCE, False)  # what an action record (never rated) carries
# the keeper's counters, stored on each step's rows (`memory_counters`) so a resumed run
# continues them from its last complete step instead of from 0
COUNTERS = (IMPORTANCE_FALLBACKS, REFLECTIONS, INSIGHT_FALLBACKS, *PLANNING_COUNTERS)


@dataclass(frozen=True)
class Perceived:
    """One thing an agent perceived in a step, to become a record of its stream."""

    agent: int
    type: MemoryType
    text: str
    source: int | None = None  # the other agent whose words these are (a reaction's focus)


class MemoryKeeper:
    def __init__(
        self,
        run_id: str,
        names: list[str],
        settings: MemorySettings,
        shelf: MemoryShelf,
        embedder: Embedder,
        llm: LLMChoice,
        counters: dict[str, int],
        seed: int | None = None,
        identities: list[str] | None = None,
    ) -> None:
        self.run_id, self.names, self.settings = run_id, names, settings
        self._identities = identities or [""] * len(names)
        self._shelf, self._embedder, self._llm = shelf, embedder, llm
        self.counters, self._seed = counters, seed
        for name in COUNTERS:
            counters.setdefault(name, 0)
        preset = REFLECTION_PRESETS[settings.retrieval or "paper"]
        self._reflection = preset.model_copy(
            update={"threshold": settings.reflection_threshold or preset.threshold}
        )
        self.memories = [self._empty(i) for i in range(len(names))]
        self._kept_aside: dict[str, tuple[MemoryRecord, np.ndarray | None]] = {}
        self._held: dict[str, int] = {}  # record id -> minute of its last access, not yet stored
        self._vectors = RunEmbeddings(shelf, embedder)
        self.planner = DayPlanner(self)

    def counts(self) -> dict[str, int]:
        """The keeper's counters now, for the step's rows."""
        return {name: self.counters[name] for name in COUNTERS}

    def restore_counts(self, saved: dict | None) -> None:
        """Continue the counters stored on the last complete step's rows (before `load`)."""
        for name in COUNTERS:
            self.counters[name] = int((saved or {}).get(name, 0))

    def minute(self, step: int) -> int:
        """Simulated minutes at the end of `step` (step 0: the run's start)."""
        return step * (self.settings.minutes_per_step or 1)

    def load(self, complete_step: int) -> None:
        """Each agent's stream as it stood after `complete_step` (see the module docstring)."""
        # before step 1 nothing is complete: even the seed memories (minute 0) are kept aside
        limit = self.minute(complete_step) if complete_step > 0 else -1
        self._vectors.remember_stored()
        for i in range(len(self.names)):
            stored = self._shelf.load_memories(i)
            if stored.embedders <= {self._embedder.name}:  # the same space as this run's
                self._vectors.remember(
                    (r.text, v)
                    for r, v in zip(stored.records, stored.vectors, strict=True)
                    if v is not None
                )
            kept = list(zip(stored.records, stored.vectors, strict=True))
            cut = next(
                (n for n, (r, v) in enumerate(kept) if r.created > limit or v is None), len(kept)
            )
            done = kept[:cut]
            for record, vector in kept[cut:]:
                self._kept_aside[record.id] = (record, vector)
            records = [r for r, _ in done]
            matrix = np.stack([v for _, v in done]) if done else np.zeros((0, 0))
            for record in records:
                self.planner.note(i, record)
            self.memories[i] = (
                AgentMemory.from_stored(
                    records, matrix, self.settings.retrieval_settings(), self._reflection
                )
                if records
                else self._empty(i)
            )

    async def observe(self, calls: ActorCalls, step: int, perceived: list[Perceived]) -> None:
        """Store what each agent perceived as records, then reflect where the threshold was
        reached (and reflection is on)."""
        now = self.minute(step)
        records = await self.make_records(
            calls, step, now, [(p.agent, p.type, p.text, []) for p in perceived]
        )
        reflect = [r.agent_index for r, fires in records if fires]
        if self.settings.reflection:
            for agent in dict.fromkeys(reflect):
                await self._reflect(calls, step, now, agent)
        if self.settings.planning:
            sources = [p.source for p in perceived]
            await react(self.planner, calls, step, now, [r for r, _ in records], sources)

    def plans_today(self, step: int) -> bool:
        return self.planner.plans_today(step)

    def current_plan(self, agent: int, step: int) -> str:
        return self.planner.current_plan(agent, step)

    def current_action(self, agent: int, step: int) -> str:
        return self.planner.current_action(agent, step)

    async def plan_actions(self, calls: ActorCalls, step: int) -> None:
        await self.planner.plan_actions(calls, step)

    def talks(self, agent: int) -> list[dict]:
        """The conversations the agent held in the last step that reacted (its rows')."""
        return self.planner.talks.get(agent, [])

    def identity(self, agent: int) -> str:
        return self._identities[agent]

    @property
    def seed(self) -> int | None:
        return self._seed

    async def plan_day(self, calls: ActorCalls, step: int, identities: list[str]) -> None:
        await self.planner.plan_day(calls, step, identities)

    async def recall(self, step: int, queries: list[str]) -> list[list[MemoryRecord]]:
        """What each agent (query i for agent i) retrieves at `step`, best first; the records'
        last access is held for `store_accesses`."""
        return await self.recall_at(self.minute(step), queries)

    async def recall_at(self, now: int, queries: list[str]) -> list[list[MemoryRecord]]:
        vectors = await self._vectors.embed(self._step_at(now), queries, None, keep=True)
        found = [m.retrieve(vectors[i], now) for i, m in enumerate(self.memories)]
        self._hold(found, now)
        return found

    def _hold(self, found: list[list[MemoryRecord]], now: int) -> None:
        for records in found:
            for record in records:
                self._held[record.id] = max(now, self._held.get(record.id, now))

    def accessed(self, agent: int | None = None) -> list[tuple[str, int]]:
        """The last accesses this step moved and the store has not yet been given (record id,
        minute), of one agent or all; a world stores them on its step's rows."""
        prefix = None if agent is None else memory_id(self.run_id, agent, 0).rsplit("-", 1)[0]
        return [
            (i, m) for i, m in self._held.items() if prefix is None or i.startswith(prefix + "-")
        ]

    def store_accesses(self, accessed: list[tuple[str, int]] | None = None) -> None:
        """Write last accesses to the store: the held ones (call once the step's rows are
        stored), or `accessed` read back from the last stored rows before `load` (a run killed
        between its rows and this write). Writing them again is harmless: a last access never
        moves backwards.

        Why held: a retrieval marks what it returns as accessed, which moves recency; a mark
        stored by a step that was then cut short would change what the rerun of that step
        retrieves, so its prompts, and the rerun would no longer replay its own history."""
        pairs = list(self._held.items()) if accessed is None else accessed
        by_minute: dict[int, list[str]] = {}
        for record_id, minute in pairs:
            by_minute.setdefault(int(minute), []).append(str(record_id))
        for minute, ids in sorted(by_minute.items()):
            self._shelf.touch_memories(ids, minute)
        if accessed is None:
            self._held = {}

    async def recall_pairs(self, now: int, asks: list[tuple[int, str]]) -> list[list[MemoryRecord]]:
        """What agent a retrieves for query q, for each (a, q) (an interview asks one agent
        several questions); last access held as `recall_at` does."""
        queries = [q for _, q in asks]
        vectors = await self._vectors.embed(self._step_at(now), queries, None, keep=True)
        found = [self.memories[a].retrieve(vectors[n], now) for n, (a, _) in enumerate(asks)]
        self._hold(found, now)
        return found

    async def make_records(
        self,
        calls: ActorCalls,
        step: int,
        now: int,
        wanted: list[tuple[int, MemoryType, str, list[str]]],
    ) -> list[tuple[MemoryRecord, bool]]:
        """Rate, embed, store and remember new records (agent, type, text, evidence ids), in
        order; each with whether it brought its agent to the reflection threshold."""
        seqs: dict[int, int] = {}
        planned = []
        for agent, kind, text, evidence in wanted:
            seq = seqs.get(agent, self.memories[agent].stream.next_seq)
            seqs[agent] = seq + 1
            stored = self._kept_aside.get(memory_id(self.run_id, agent, seq))
            if stored is not None and (stored[0].text, stored[0].type) != (text, kind):
                raise RuntimeError(
                    f"the resumed step made record {stored[0].id} as {text!r}, and the stored "
                    f"one is {stored[0].text!r}: the run no longer replays its own history"
                )
            reuse = stored if stored is not None and stored[1] is not None else None
            planned.append((agent, kind, text, evidence, seq, reuse))
        # a plan's 5-15-minute actions are the planner's scratch (records.is_action): not rated
        to_rate = [p for p in planned if p[5] is None and not is_action(p[1], p[2])]
        replies = await calls.run([self._rating_call(step, p[0], p[4], p[2]) for p in to_rate])
        ratings = {
            (p[0], p[4]): parse_importance(r.text) for p, r in zip(to_rate, replies, strict=True)
        }
        fresh_texts = [p[2] for p in planned if p[5] is None]
        # numbered even when empty
        fresh_vectors = await self._vectors.embed(step, fresh_texts, None)
        vectors = iter(list(fresh_vectors) if fresh_texts else [])
        made: list[tuple[MemoryRecord, np.ndarray, bool]] = []
        for agent, kind, text, evidence, seq, reuse in planned:
            memory = self.memories[agent]
            if reuse is not None:
                record, vector = reuse[0], reuse[1]
            else:
                rating = ratings.get((agent, seq), UNRATED)
                record = memory.stream.make(
                    kind,
                    text,
                    now,
                    rating.value,
                    importance_fallback=rating.fallback,
                    evidence_ids=evidence,
                )
                vector = next(vectors)
            self.counters[IMPORTANCE_FALLBACKS] += int(record.importance_fallback)  # reused too
            made.append((record, vector, memory.remember(record, vector)))
        new = [(r, v) for r, v, _ in made if r.id not in self._kept_aside]
        if new:
            self._shelf.store_memories(
                [r for r, _ in new], np.stack([v for _, v in new]), self._embedder.name
            )
        return [(r, fires) for r, _, fires in made]

    async def _reflect(self, calls: ActorCalls, step: int, now: int, agent: int) -> None:
        """Questions over the recent records, retrieval per question, insights per question
        stored as thoughts citing what they rest on."""
        memory = self.memories[agent]
        settings = self._reflection
        window = memory.reflection_window()
        seq = memory.stream.next_seq  # names this reflection's calls in the ledger
        [reply] = await calls.run(
            [
                self.call(
                    "memory_questions",
                    step,
                    agent,
                    seq,
                    mp.questions_messages(window, settings.questions),
                )
            ]
        )
        questions = parse_questions(reply.text, settings.questions)
        self.counters[REFLECTIONS] += 1
        if not questions:
            return
        vectors = await self._vectors.embed(step, questions, self.names[agent], keep=True)
        shown = [memory.retrieve(vector, now) for vector in vectors]
        self._hold(shown, now)
        asks = [
            self.call(
                "memory_insights",
                step,
                agent,
                seq * 10 + q,
                mp.insights_messages(self.names[agent], records, settings.insights),
            )
            for q, records in enumerate(shown)
        ]
        wanted: list[tuple[int, MemoryType, str, list[str]]] = []
        for records, answer in zip(shown, await calls.run(asks), strict=True):
            for insight in parse_insights(answer.text, settings.insights):
                self.counters[INSIGHT_FALLBACKS] += int(insight.fallback)
                evidence = [r.id for r in cited(insight.evidence, records)]
                wanted.append((agent, "thought", insight.text, evidence))
        await self.make_records(calls, step, now, wanted)

    def _step_at(self, now: int) -> int:
        """The step whose end is simulated minute `now` (for the ledger's rows)."""
        return now // (self.settings.minutes_per_step or 1)

    def _rating_call(self, step: int, agent: int, seq: int, text: str) -> ActorCall:
        messages = mp.importance_messages(self.names[agent], text)
        return self.call("memory_importance", step, agent, seq, messages, RATING)

    def call(
        self,
        purpose: str,
        step: int,
        agent: int,
        index: int,
        messages: list[dict],
        params: GenerationParams | None = None,
    ) -> ActorCall:
        """One memory call; with a run seed, its own seed derived from where it sits."""
        merged = placed_params(
            self._llm.params.merge(params), self._seed, purpose, step, agent, index
        )
        label = f"{self.names[agent]}'s {purpose} call {index} of step {step}"
        return ActorCall(
            purpose, step, index, self.names[agent], self._llm, messages, merged, label
        )

    def _empty(self, agent: int) -> AgentMemory:
        return AgentMemory.empty(
            self.run_id, agent, self.settings.retrieval_settings(), self._reflection
        )
