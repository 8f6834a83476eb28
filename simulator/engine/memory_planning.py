"""Plans in the memory stream: a day's plan, its hour blocks, and re-planning on a reaction.

Park et al.: each simulated day an agent writes a broad plan from its identity and what it
recalls (reflections included), then breaks it into hour blocks; both are memories. A
perception that calls for a reaction re-plans the rest of the day. Here the plan is made at the
first step of each simulated day (`memory_plan`, then `memory_plan_hours`); a perception rated
REACT_AT or more asks the agent whether to react (`memory_react`), and a yes re-plans the hour
blocks from the hour the next step starts in. `current_plan` gives the block `{plan}` shows.
The records, calls and counters are the keeper's (engine/memory_keeper.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator.domain.memory.parsers import parse_hourly_plan, parse_plan_items, parse_reaction
from simulator.domain.memory.records import MemoryRecord
from simulator.domain.memory.settings import PLAN_END_HOUR
from simulator.engine.step_calls import ActorCalls
from simulator.prompting import memory_prompts as mp

if TYPE_CHECKING:
    from simulator.engine.memory_keeper import MemoryKeeper

REACT_AT = 7  # a perception this important (or more) asks the agent whether to react
PLAN_FALLBACKS = "plan_fallbacks"  # counter: daily plans or hour breakdowns with no usable line


class DayPlanner:
    """The plans of one run's agents: what each does this hour, made and re-made by calls."""

    def __init__(self, keeper: MemoryKeeper) -> None:
        self.keeper = keeper
        names = keeper.names
        self._hourly: list[dict[tuple[int, int], str]] = [{} for _ in names]  # (day, hour)
        self._day_plans: list[list[MemoryRecord]] = [[] for _ in names]  # today's plan items

    async def react(
        self, calls: ActorCalls, step: int, now: int, records: list[MemoryRecord]
    ) -> None:
        """Each agent whose most important new perception reaches REACT_AT is asked whether to
        react (memory_react); a yes re-plans the rest of its day from the hour the next step
        starts in, the new blocks citing the perception and the day's plan (they replace the
        old ones)."""
        k = self.keeper
        strongest: dict[int, MemoryRecord] = {}
        for record in records:
            best = strongest.get(record.agent_index)
            if record.importance >= REACT_AT and (
                best is None or record.importance > best.importance
            ):
                strongest[record.agent_index] = record
        if not strongest:
            return
        day, hour = k.settings.clock(now)
        agents = sorted(strongest)
        asks = [
            k.call(
                "memory_react",
                step,
                i,
                strongest[i].seq,
                mp.react_messages(
                    k.names[i],
                    strongest[i].text,
                    self._hourly[i].get((day, hour), ""),
                    day,
                    hour,
                ),
            )
            for i in agents
        ]
        replies = await calls.run(asks)
        reacting = [
            (i, reaction)
            for i, r in zip(agents, replies, strict=True)
            if (reaction := parse_reaction(r.text))
        ]
        start, end = hour, PLAN_END_HOUR  # `now` ends this step: the next starts at `hour`
        if not reacting or start > end:
            return
        asks = [
            k.call(
                "memory_plan_hours",
                step,
                i,
                strongest[i].seq,
                mp.replan_messages(k.names[i], self._day_plans[i], reaction, start, end),
            )
            for i, reaction in reacting
        ]
        wanted = []
        for (i, _), reply in zip(reacting, await calls.run(asks), strict=True):
            blocks = parse_hourly_plan(reply.text, start, end)
            k.counters[PLAN_FALLBACKS] += int(not blocks)
            cites = [strongest[i].id, *(r.id for r in self._day_plans[i])]
            wanted += [
                (i, "plan", f"{h:02d}:00 {what}", cites) for h, what in sorted(blocks.items())
            ]
        for record, _ in await k.make_records(calls, step, now, wanted):
            self.note(record.agent_index, record)

    def plans_today(self, step: int) -> bool:
        """Whether `step` is the first of a simulated day (plans are made then)."""
        k = self.keeper
        if not k.settings.planning:
            return False
        start = k.settings.clock(k.minute(step - 1))[0]
        return step == 1 or start != k.settings.clock(k.minute(step - 2))[0]

    def current_plan(self, agent: int, step: int) -> str:
        """The hour block of the agent's plan for the hour `step` starts in ('' if none)."""
        k = self.keeper
        return self._hourly[agent].get(k.settings.clock(k.minute(step - 1)), "")

    async def plan_day(self, calls: ActorCalls, step: int, identities: list[str]) -> None:
        """Every agent's plan for the rest of the day from its identity and what it recalls
        (reflections included), stored as plan records, then broken into hour blocks, each a
        plan record citing the day's plan. Made one simulated minute into the step, so a step
        cut short keeps its plans aside like its other records."""
        k = self.keeper
        now = k.minute(step - 1) + 1
        day, hour = k.settings.clock(now)
        names = k.names
        found = await k.recall_at(now, [f"{n}'s plans for today" for n in names])
        asks = [
            k.call(
                "memory_plan",
                step,
                i,
                k.memories[i].stream.next_seq,
                mp.day_plan_messages(
                    names[i], identities[i], mp.recalled_text(found[i], "(nothing yet)"), day, hour
                ),
            )
            for i in range(len(names))
        ]
        items = [parse_plan_items(reply.text) for reply in await calls.run(asks)]
        k.counters[PLAN_FALLBACKS] += sum(not found_items for found_items in items)
        wanted = [(i, "plan", text, []) for i in range(len(names)) for text in items[i]]
        made = await k.make_records(calls, step, now, wanted)
        plans: list[list[MemoryRecord]] = [[] for _ in names]
        for record, _ in made:
            plans[record.agent_index].append(record)
            self.note(record.agent_index, record)
        end = PLAN_END_HOUR
        asks = [
            k.call(
                "memory_plan_hours",
                step,
                i,
                k.memories[i].stream.next_seq,
                mp.hourly_plan_messages(names[i], plans[i], hour, end),
            )
            for i in range(len(names))
            if plans[i]
        ]
        planned = [i for i in range(len(names)) if plans[i]]
        hourly = [parse_hourly_plan(r.text, hour, end) for r in await calls.run(asks)]
        k.counters[PLAN_FALLBACKS] += sum(not blocks for blocks in hourly)
        wanted = [
            (i, "plan", f"{h:02d}:00 {what}", [r.id for r in plans[i]])
            for i, blocks in zip(planned, hourly, strict=True)
            for h, what in sorted(blocks.items())
        ]
        for record, _ in await k.make_records(calls, step, now, wanted):
            self.note(record.agent_index, record)

    def note(self, agent: int, record: MemoryRecord) -> None:
        """Remember a plan record: a day's plan item (it cites nothing; a new day's first item
        starts a new list), or an hour block for `current_plan` (it cites the day's plan)."""
        k = self.keeper
        if record.type != "plan":
            return
        if not record.evidence:
            plans = self._day_plans[agent]
            if plans and plans[-1].created != record.created:
                plans.clear()
            plans.append(record)
            return
        hour = int(record.text[:2])
        day = k.settings.clock(record.created)[0]
        self._hourly[agent][(day, hour)] = record.text[6:]
