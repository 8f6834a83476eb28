"""A run's memory streams as a person browses them: each agent's records over time
with their importance, the evidence tree under each thought, and what each step's prompt was
shown (the `retrieved` ids the engine stores on a world's rows).

`browse_memories` gathers it all for one run; `llm-sim conversation memory`, the interactive
menu and the report render the same `MemoryBrowse`. Nothing here prints or prompts; a run that
cannot be browsed is a UserError saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simulator.errors import UserError
from simulator.memory.analysis.runs import (
    SimClock,
    agent_names,
    clock_of,
    minutes_per_step,
    no_stream_error,
    pick_agent,
    step_rows,
    step_word,
)
from simulator.memory.domain.records import CITING_TYPES, MEMORY_TYPES, MemoryRecord
from simulator.store.store import Store
from simulator.worlds import kind_of


@dataclass
class EvidenceNode:
    """A record in a thought's tree and the records it rests on; `record` is None when an
    evidence id names nothing stored, `repeated` when the id is already on the path above."""

    id: str
    record: MemoryRecord | None
    evidence: list[EvidenceNode] = field(default_factory=list)
    repeated: bool = False


@dataclass
class StepRetrieval:
    """What one agent's prompt showed at one step: the records, in the order stored, and ids
    that name nothing stored. `recorded` is False when the row keeps no `retrieved` list."""

    step: int
    recorded: bool
    ids: list[str] = field(default_factory=list)  # as the row lists them
    records: list[MemoryRecord] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass
class AgentMemories:
    index: int
    name: str
    stream: list[MemoryRecord]  # every stored record, stream order
    records: list[MemoryRecord]  # those the type filter keeps
    steps: list[StepRetrieval]  # by step (only the asked step with `step`)
    retrieved_at: dict[str, list[int]]  # record id -> the steps whose prompt showed it

    @property
    def by_id(self) -> dict[str, MemoryRecord]:
        return {r.id: r for r in self.stream}

    def tree(self, record: MemoryRecord) -> EvidenceNode:
        """`record` over its evidence, recursively (a thought on thoughts grows deeper)."""
        known = self.by_id

        def node(record_id: str, path: frozenset[str]) -> EvidenceNode:
            found = known.get(record_id)
            if found is None or record_id in path:
                return EvidenceNode(record_id, found, repeated=found is not None)
            below = path | {record_id}
            return EvidenceNode(record_id, found, [node(e, below) for e in found.evidence])

        return node(record.id, frozenset())

    def trees(self) -> list[EvidenceNode]:
        """One tree per thought the filter keeps, and per plan that cites evidence."""
        return [
            self.tree(r)
            for r in self.records
            if r.type == "thought" or (r.type in CITING_TYPES and r.evidence)
        ]


@dataclass
class MemoryBrowse:
    run_id: str
    kind: str  # chat, grid or network
    step_word: str  # what one of the run's rows is called: step, round or message
    clock: SimClock | None
    type: str | None
    step: int | None
    agents: list[AgentMemories]
    minutes_per_step: int | None = None  # a stream's records of step s are made at s x this

    def time(self, minute: int) -> str:
        return self.clock.render(minute) if self.clock else f"minute {minute}"

    def step_of(self, record: MemoryRecord) -> int | None:
        """The step (round) a record was made at, when the run's minutes per step are known."""
        return None if not self.minutes_per_step else record.created // self.minutes_per_step

    def record_json(self, record: MemoryRecord, agent: AgentMemories) -> dict:
        return {
            **record.model_dump(),
            "time": self.time(record.created),
            self.step_word: self.step_of(record),
            "last_accessed_time": self.time(record.last_accessed),
            "retrieved_at": agent.retrieved_at.get(record.id, []),
        }

    def tree_json(self, node: EvidenceNode) -> dict:
        if node.record is None or node.repeated:
            return {"id": node.id, "missing": node.record is None, "repeated": node.repeated}
        r = node.record
        return {
            "id": r.id,
            "type": r.type,
            "text": r.text,
            "time": self.time(r.created),
            self.step_word: self.step_of(r),
            "importance": r.importance,
            "importance_fallback": r.importance_fallback,
            "depth": r.depth,
            "evidence": [self.tree_json(child) for child in node.evidence],
        }

    def to_json(self, trees: bool = True) -> dict:
        """Everything gathered, as plain data (`trees`: with each thought's evidence tree)."""
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "step_word": self.step_word,
            "clock": None if self.clock is None else vars(self.clock),
            "minutes_per_step": self.minutes_per_step,
            "type": self.type,
            "step": self.step,
            "agents": [
                {
                    "index": a.index,
                    "name": a.name,
                    "stored": len(a.stream),
                    "records": [self.record_json(r, a) for r in a.records],
                    **({"trees": [self.tree_json(t) for t in a.trees()]} if trees else {}),
                    "steps": [
                        {
                            self.step_word: s.step,
                            "recorded": s.recorded,
                            "retrieved": s.ids,
                            "missing": s.missing,
                        }
                        for s in a.steps
                    ],
                }
                for a in self.agents
            ],
        }


@dataclass
class RunMemories:
    """Who in a run has memories, without reading them: (index, name, records stored)."""

    run_id: str
    step_word: str
    agents: list[tuple[int, str, int]]


def memory_agents(store: Store, run_id: str) -> RunMemories:
    """The agents of a run that have stored memories; the same UserErrors as browsing for an
    unknown run or a run without a memory stream."""
    doc = store.conversations.get(run_id)
    counts = store.memories.agents(run_id)
    if not counts:
        raise no_stream_error(store, doc)
    names = agent_names(doc, max(counts) + 1)
    return RunMemories(run_id, step_word(doc), [(i, names[i], n) for i, n in counts.items()])


def stored_steps(store: Store, run_id: str) -> list[int]:
    """The steps (rounds, messages) of a run whose rows record what their prompts showed."""
    doc = store.conversations.get(run_id)
    rows = step_rows(store, doc, agent_names(doc))
    return sorted({s for found in rows.values() for s, ids in found if ids is not None})


def browse_memories(
    store: Store,
    run_id: str,
    *,
    agent: str | int | None = None,
    type: str | None = None,
    step: int | None = None,
    clock: SimClock | None = None,
) -> MemoryBrowse:
    """One run's memory streams: every agent with stored memories, or the one `agent` names
    (a name, or an index from 0); records of one `type` only; retrievals of one `step` only.
    `clock` overrides the run's own. UserError for an unknown run or agent, a run without a
    memory stream, an unknown type, or a step the run did not store or record retrieval for."""
    doc = store.conversations.get(run_id)  # NotFound (a UserError) for an unknown id
    if type is not None and type not in MEMORY_TYPES:
        raise UserError(
            f"{type!r} is not a memory type",
            field="--type",
            fix=f"give one of {', '.join(MEMORY_TYPES)}",
        )
    counts = store.memories.agents(run_id)
    if not counts:
        raise no_stream_error(store, doc)
    names = agent_names(doc, max(counts) + 1)
    indices = list(counts) if agent is None else [pick_agent(doc, names, agent)]
    rows = step_rows(store, doc, names)
    if step is not None:
        _check_step(doc, rows, step)
    agents = []
    for i in indices:
        stream = store.memories.stream(run_id, i)
        mine = [s for s in rows.get(i, []) if step is None or s[0] == step]
        steps, retrieved_at = _retrievals(stream, mine)
        kept = [r for r in stream if type is None or r.type == type]
        agents.append(AgentMemories(i, names[i], stream, kept, steps, retrieved_at))
    return MemoryBrowse(
        run_id,
        kind_of(doc),
        step_word(doc),
        clock or clock_of(doc),
        type,
        step,
        agents,
        minutes_per_step(doc),
    )


def _check_step(doc: dict, rows: dict[int, list[tuple[int, list | None]]], step: int) -> None:
    word = step_word(doc)
    at = [ids for found in rows.values() for s, ids in found if s == step]
    stored = sorted({s for found in rows.values() for s, _ in found})
    if not at:
        span = f"{word}s {stored[0]} to {stored[-1]} are stored" if stored else "none is stored"
        raise UserError(
            f"run {doc['_id']} has no {word} {step} ({span})",
            field="--step",
            fix=f"give a {word} the run stored",
        )
    if all(ids is None for ids in at):
        raise UserError(
            f"run {doc['_id']}'s {word} {step} does not record which memories its prompts "
            "showed (the run was made before retrieval was recorded, or without a memory "
            "stream in its prompts)",
            field="--step",
            fix="leave --step out to see the stream",
        )


def _retrievals(
    stream: list[MemoryRecord], rows: list[tuple[int, list | None]]
) -> tuple[list[StepRetrieval], dict[str, list[int]]]:
    known = {r.id: r for r in stream}
    steps: list[StepRetrieval] = []
    retrieved_at: dict[str, list[int]] = {}
    for number, ids in rows:
        if ids is None:
            steps.append(StepRetrieval(number, False))
            continue
        found = StepRetrieval(number, True, list(ids))
        for record_id in ids:
            if record_id in known:
                found.records.append(known[record_id])
                retrieved_at.setdefault(record_id, []).append(number)
            else:
                found.missing.append(record_id)
        steps.append(found)
    return steps, retrieved_at
