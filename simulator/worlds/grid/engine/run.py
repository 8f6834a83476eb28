"""The 2D community as a world of the step loop: message, delivery, memory, move, all at once.

Every agent acts in every step; each stage sends every agent's call together
(engine/step_calls.py). A step's rows are stored when the step is complete; the calls are in
the ledger as they happen, so a run killed in the middle of a step resumes from the last
complete step and replays the calls already answered instead of sending them again.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.domain.params import GenerationParams
from simulator.engine.gc_budget import fewer_collections
from simulator.engine.step_calls import REPLAYED, ActorCall, ActorCalls, replay_book
from simulator.engine.step_loop import RunContext, StepRun, run_world
from simulator.memory.engine.keeper import MemoryKeeper, Perceived
from simulator.memory.prompting.prompts import recalled_text
from simulator.worlds.grid.domain import rules as grid
from simulator.worlds.grid.domain.experiment import STAGES, GridExperiment, GridSpec
from simulator.worlds.grid.engine import events as gev
from simulator.worlds.grid.engine.interviews import Interviewees, interview
from simulator.worlds.grid.engine.personality_probe import TestTakers, take_test

NOTHING_RECALLED = "(nothing yet)"  # {memory} of a stream with no record
MOVE_FALLBACKS = "move_fallbacks"  # counter: move replies that named no command (agent stayed)
PURPOSES = {stage: f"grid_{stage}" for stage in STAGES}
COLLECTION = "grid_steps"  # where the steps' rows are stored


@dataclass(kw_only=True)
class GridRun(RunContext):
    """Everything one grid run needs: the run's context and the experiment's prompts."""

    spec: GridSpec
    experiment: GridExperiment


@dataclass
class GridState:
    """Where every agent is after `step` complete steps, and what it carries into the next."""

    step: int
    positions: list[grid.Position]
    memories: list[str]
    received: list[str]  # what each agent read in the last step ("No Messages" before step 1)


async def run_grid(run: GridRun) -> str:
    """Run (or resume) a grid run to the end; return its final status."""
    loop = StepRun(run.run_id, run.recorder, run.on_event, run.stop)
    with fewer_collections():  # engine/gc_budget.py: full collections walk every agent
        return await run_world(loop, GridCommunity(run))


def resume_state(spec: GridSpec, rows: list[dict]) -> tuple[GridState, set[str]]:
    """The state after the last complete step of the stored rows, and the ids already stored
    of the step after it (a kill between two inserts of one step leaves some)."""
    world = spec.world
    state = GridState(
        0,
        [tuple(p) for p in spec.start],  # type: ignore[misc]
        [_first_memory(spec, i) for i in range(world.agents)],
        [grid.NO_MESSAGES] * world.agents,
    )
    by_step: dict[int, list[dict]] = {}
    for row in rows:
        by_step.setdefault(row["step"], []).append(row)
    step = 1
    while len(by_step.get(step, [])) == world.agents:
        done = sorted(by_step[step], key=lambda r: r["agent_index"])
        state = GridState(
            step,
            [tuple(r["position_after"]) for r in done],  # type: ignore[misc]
            [r["memory"] for r in done],
            [r["received"] for r in done],
        )
        step += 1
    return state, {r["_id"] for r in by_step.get(step, [])}


def _first_memory(spec: GridSpec, agent: int) -> str:
    """The summary memory an agent starts with: its persona's seed memories, else the world's
    initial memory."""
    seeds = spec.persona(agent).memories
    return "\n".join(seeds) if seeds else spec.world.initial_memory


class GridCommunity:
    """The world's rules: everyone acts each step, hears those within the radius, and moves."""

    def __init__(self, run: GridRun):
        self.run_ = run
        self.spec = run.spec
        self.world = run.spec.world
        self.names = run.spec.names
        self.prompts = run.experiment.prompts
        self.state = GridState(0, [], [], [])
        self.partial: set[str] = set()  # row ids of the next step stored by a killed run
        self.calls = ActorCalls(run.recorder, run.llms)
        self.keeper: MemoryKeeper | None = None
        self._now = 1  # the step being played (its plan block fills {plan})
        self.interviews: list[dict] | None = None  # the probe's, once asked
        self.personality: list[dict] = []  # the personality tests taken (first, last)

    async def prepare(self) -> None:
        run, recorder = self.run_, self.run_.recorder
        recorder.counters.setdefault(MOVE_FALLBACKS, 0)
        recorder.counters.setdefault(REPLAYED, 0)
        calls = recorder.load_calls()
        rows = self._stored_rows()
        self.state, self.partial = resume_state(self.spec, rows)
        for row in rows:  # a fork's shared rows are its parent's work: not counted
            if row["step"] <= self.state.step and row["conversation_id"] == run.run_id:
                recorder.counters["messages"] += 1
                recorder.counters[MOVE_FALLBACKS] += int(bool(row.get("move_fallback")))
        self.calls = ActorCalls(recorder, run.llms, replay_book(calls))
        if self.spec.memory.is_stream:
            assert run.embedder is not None, "a memory stream needs an embedder"
            self.keeper = MemoryKeeper(
                run.run_id,
                self.names,
                self.spec.memory,
                recorder,
                run.embedder,
                self.spec.llm,
                recorder.counters,
                self.spec.seed,
                [self.spec.persona(i).identity for i in range(self.world.agents)],
            )
            last = [r for r in rows if r["step"] == self.state.step]
            accessed = [(i, m) for row in last for i, m in row.get("accessed") or []]
            self.keeper.store_accesses(accessed)  # in case a kill came before they were
            self.keeper.restore_counts(last[0].get("memory_counters") if last else None)
            self.keeper.load(self.state.step)
            if self.state.step == 0:  # the personas' seed memories, rated like any record
                seeds = [
                    Perceived(i, "observation", text)
                    for i in range(self.world.agents)
                    for text in self.spec.persona(i).memories
                ]
                await self.keeper.observe(self.calls, 0, seeds)
        run.on_event(
            gev.GridPlanned(
                run.run_id,
                self.names,
                self.world.model_dump(),
                self.state.step,
                self.state.positions,
            )
        )
        await self._personality_test("first")

    async def advance(self) -> bool:
        if self.state.step < self.world.steps:
            return True
        probe = self.spec.probe
        if probe is not None and probe.asks and self.interviews is None:
            who = Interviewees(
                self.names,
                [self.spec.persona(i).identity for i in range(self.world.agents)],
                self.spec.llm,
                self.spec.seed,
                self.world.steps + 1,
            )
            counters = self.run_.recorder.counters
            self.interviews = await interview(self.calls, probe, who, self._recall_for, counters)
            if self.keeper is not None:
                self.keeper.store_accesses()
        await self._personality_test("last")
        return False

    async def step(self) -> None:
        self.state = await self._step(self.state, self.partial)
        self.partial = set()

    def done_fields(self) -> dict:
        fields = {} if self.interviews is None else {"interviews": self.interviews}
        return fields | ({"personality": self.personality} if self.personality else {})

    async def _personality_test(self, when: str) -> None:
        """The personality test due `when` (once): at "first" from the starting state (so a
        resumed run asks the same prompts and replays them), at "last" from the final one."""
        test = self.spec.personality
        if test is None or when not in test.at or any(t["when"] == when for t in self.personality):
            return
        state = resume_state(self.spec, [])[0] if when == "first" else self.state
        empty = self.spec.memory.kind == "none"
        fields = [
            self._fields(
                i, state.positions[i], "" if empty else state.memories[i], state.received[i]
            )
            | ({"plan": "", "action": ""} if when == "first" else {})  # no plan before step 1
            for i in range(self.world.agents)
        ]
        step = 0 if when == "first" else self.world.steps + 1
        who = TestTakers(self.names, self.spec.llm, self.spec.seed, step)
        counters = self.run_.recorder.counters
        self.personality += await take_test(self.calls, test, who, when, fields, counters)

    async def _recall_for(self, asks: list[tuple[int, str]]) -> list[tuple[str, list[str]]]:
        """What each interviewed agent is shown for its question: its stream's records
        retrieved for it, its summary memory's last text, or nothing."""
        if self.keeper is not None:
            now = self.keeper.minute(self.state.step)
            found = await self.keeper.recall_pairs(now, asks)
            return [(recalled_text(r, NOTHING_RECALLED), [x.id for x in r]) for r in found]
        if self.spec.memory.kind == "none":
            return [(NOTHING_RECALLED, []) for _ in asks]
        return [(self.state.memories[i], []) for i, _ in asks]

    def _stored_rows(self) -> list[dict]:
        """A fork's shared rows (read from its parent: steps before its fork point), then the
        rows this run stored."""
        return self.run_.recorder.load_rows(COLLECTION)

    def _fields(self, i: int, position: grid.Position, memory: str, messages: str) -> dict:
        return {
            "name": self.names[i],
            "x": position[0],
            "y": position[1],
            "width": self.world.width,
            "height": self.world.height,
            "agents": self.world.agents,
            "radius": self.world.radius,
            "memory": memory,
            "messages": messages,
            "identity": self.spec.persona(i).identity,
            "plan": self.keeper.current_plan(i, self._now) if self.keeper else "",
            "action": self.keeper.current_action(i, self._now) if self.keeper else "",
        }

    def _params(self, step: int, stage: int, agent: int) -> GenerationParams:
        """The run's seed, offset per call (step, stage, agent), wrapped into 32 bits."""
        params = self.spec.llm.params
        if self.spec.seed is None:
            return params
        offset = ((step - 1) * len(STAGES) + stage) * self.world.agents + agent
        return params.merge(GenerationParams(seed=(self.spec.seed + offset) % 2**32))

    async def _stage(self, stage: int, step: int, texts: list[dict]) -> list[str]:
        """Every agent's call of one stage, at once; the replies in agent order."""
        name = STAGES[stage]
        template = getattr(self.prompts, name)
        calls = [
            ActorCall(
                PURPOSES[name],
                step,
                i,
                self.names[i],
                self.spec.llm,
                [{"role": "user", "content": template.format(**fields)}],
                self._params(step, stage, i),
                f"{self.names[i]}'s {PURPOSES[name]} call of step {step}",
            )
            for i, fields in enumerate(texts)
        ]
        return [reply.text for reply in await self.calls.run(calls)]

    async def _step(self, state: GridState, stored: set[str]) -> GridState:
        run, world, step = self.run_, self.world, state.step + 1
        positions = state.positions
        run.on_event(gev.GridStepStarted(run.run_id, step))
        self._now = step
        if self.keeper is not None and self.keeper.plans_today(step):
            identities = [self.spec.persona(i).identity for i in range(world.agents)]
            await self.keeper.plan_day(self.calls, step, identities)
        if self.keeper is not None and self.spec.memory.planning:  # a new hour's actions
            await self.keeper.plan_actions(self.calls, step)
        shown, recalled = await self._recall(step, state.memories, state.received)
        fields = [
            self._fields(i, positions[i], shown[i], state.received[i]) for i in range(world.agents)
        ]
        messages = [text.strip() for text in await self._stage(0, step, fields)]
        recipients, senders = grid.delivery(
            positions, world.radius, world.width, world.height, world.torus
        )
        received = [
            grid.received_text(self.names, messages, senders[i]) for i in range(world.agents)
        ]
        if self.spec.memory.kind == "summary":
            fields = [
                self._fields(i, positions[i], state.memories[i], received[i])
                for i in range(world.agents)
            ]
            memories = [text.strip() for text in await self._stage(1, step, fields)]
        else:
            await self._perceive(step, messages, senders)
            memories, also = await self._recall(step, shown, received)
            recalled = [list(dict.fromkeys(a + b)) for a, b in zip(recalled, also, strict=True)]
        fields = [
            self._fields(i, positions[i], memories[i], received[i]) for i in range(world.agents)
        ]
        replies = await self._stage(2, step, fields)
        parsed = [grid.parse_move(reply) for reply in replies]
        after = [
            grid.moved(positions[i], move, world.width, world.height, world.torus)
            for i, (move, _) in enumerate(parsed)
        ]
        rows = [
            {
                "conversation_id": run.run_id,
                "step": step,
                "agent": self.names[i],
                "agent_index": i,
                "position_before": list(positions[i]),
                "position_after": list(after[i]),
                "message": messages[i],
                "recipients": [self.names[j] for j in recipients[i]],
                "heard_from": [self.names[j] for j in senders[i]],
                "received": received[i],
                "memory": memories[i],
                "move_reply": replies[i],
                "move": parsed[i][0],
                "move_fallback": parsed[i][1],
                **(self._stream_fields(i, recalled[i]) if self.keeper is not None else {}),
            }
            for i in range(world.agents)
        ]
        await run.recorder.record_step_rows(rows, stored, COLLECTION)
        if self.keeper is not None:  # after the rows: a cut step leaves no access behind
            self.keeper.store_accesses()
        run.recorder.counters[MOVE_FALLBACKS] += sum(fallback for _, fallback in parsed)
        run.on_event(gev.GridStepStored(run.run_id, step, rows))
        return GridState(step, after, memories, received)

    def _stream_fields(self, agent: int, retrieved: list[str]) -> dict:
        """A stream run's row names the records its prompts showed, every last access the
        agent's step moved ([id, minute]), written again on resume if the run was killed
        between its rows and those writes (engine/memory_keeper.py), and the keeper's counters
        after the step, which a resumed run continues."""
        assert self.keeper is not None
        moved = [[i, m] for i, m in self.keeper.accessed(agent)]
        talks = {"talks": self.keeper.talks(agent)} if self.spec.memory.plan_rules()[3] else {}
        return {
            "retrieved": retrieved,
            "accessed": moved,
            "memory_counters": self.keeper.counts(),
            **talks,
        }

    async def _recall(
        self, step: int, carried: list[str], queries: list[str]
    ) -> tuple[list[str], list[list[str]]]:
        """What fills each agent's {memory}, and the ids of the records it shows: the summary
        carried from the last step, nothing, or the stream's records retrieved for `queries`
        (what the agent heard last)."""
        if self.keeper is None:
            empty = self.spec.memory.kind == "none"
            return ([""] * len(carried) if empty else list(carried)), [[] for _ in carried]
        found = await self.keeper.recall(step, queries)
        texts = [recalled_text(records, NOTHING_RECALLED) for records in found]
        return texts, [[r.id for r in records] for records in found]

    async def _perceive(self, step: int, messages: list[str], senders: list[list[int]]) -> None:
        """Each agent's step as records of its stream: what it said, what each sender said
        (observations: the events the agent perceived; see MemorySettings.heard_type)."""
        if self.keeper is None:
            return
        heard = self.spec.memory.heard_type()
        perceived = []
        for i in range(self.world.agents):
            if messages[i]:
                perceived.append(Perceived(i, heard, f"I said: {messages[i]}"))
            for j in senders[i]:
                if j != i and messages[j]:
                    said = f"{self.names[j]} said: {messages[j]}"
                    perceived.append(Perceived(i, heard, said, source=j))
        await self.keeper.observe(self.calls, step, perceived)
