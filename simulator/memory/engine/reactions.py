"""Reactions to what an agent perceived, as the reference code's `plan()` asks them
(persona/cognitive_modules/plan.py `_choose_retrieved`, `_should_react`), for the day planner
of engine/memory_planning.py: a focal perception per agent and step, whether to talk
(engine/memory_talk.py) and, if not, whether to react, a yes re-planning the day's hour blocks.
"""

from __future__ import annotations

import random

from simulator.engine.step_calls import ActorCalls
from simulator.memory.domain.parsers import parse_hourly_plan, parse_reaction, parse_yes_no
from simulator.memory.domain.records import MemoryRecord
from simulator.memory.domain.settings import PLAN_END_HOUR
from simulator.memory.engine.planning import PLAN_FALLBACKS, REACT_FALLBACKS, DayPlanner
from simulator.memory.prompting import prompts as mp


async def react(
    planner: DayPlanner,
    calls: ActorCalls,
    step: int,
    now: int,
    records: list[MemoryRecord],
    sources: list[int | None],
) -> None:
    """Ask for reactions to this step's perceptions (the module docstring); `sources[n]`
    is the agent whose words `records[n]` holds (None: no other agent's)."""
    planner.talks = {}
    _, rule, threshold, talk, _ = planner.keeper.settings.plan_rules()
    if rule == "importance_at_least":
        strongest: dict[int, MemoryRecord] = {}
        for record in records:
            best = strongest.get(record.agent_index)
            if record.importance >= (threshold or 0) and (
                best is None or record.importance > best.importance
            ):
                strongest[record.agent_index] = record
        await ask_react(planner, calls, step, now, strongest)
        return
    focal = focal_perceptions(planner, step, records, sources)
    if not focal:
        return
    rest = dict(focal)
    if talk:
        from simulator.memory.engine.talk import talk_or_not

        for agent in await talk_or_not(planner, calls, step, now, focal):
            rest.pop(agent, None)
    await ask_react(planner, calls, step, now, {i: r for i, (r, _) in rest.items()})


def focal_perceptions(
    planner: DayPlanner, step: int, records: list[MemoryRecord], sources: list[int | None]
) -> dict[int, tuple[MemoryRecord, int]]:
    """Each agent's focal perception and whose it is: one of the others' (never its own)
    chosen at random as `_choose_retrieved` does, from a generator seeded by the run's
    seed, the step and the agent, so a resumed step chooses the same."""
    heard: dict[int, list[tuple[MemoryRecord, int]]] = {}
    for record, source in zip(records, sources, strict=True):
        if source is not None and source != record.agent_index:
            heard.setdefault(record.agent_index, []).append((record, source))
    seed = planner.keeper.seed
    return {
        agent: random.Random(f"focal:{seed}:{step}:{agent}").choice(options)
        for agent, options in sorted(heard.items())
    }


async def ask_react(
    planner: DayPlanner, calls: ActorCalls, step: int, now: int, focal: dict[int, MemoryRecord]
) -> None:
    """Each agent is asked whether to react to its focal perception (memory_react); a yes
    re-plans the rest of its day from the hour the next step starts in, the new blocks
    citing the perception and the day's plan (they replace the old ones)."""
    if not focal:
        return
    k = planner.keeper
    day, hour = k.settings.clock(now)
    agents = sorted(focal)
    asks = [
        k.call(
            "memory_react",
            step,
            i,
            focal[i].seq,
            mp.react_messages(
                k.names[i],
                focal[i].text,
                planner._hourly[i].get((day, hour), ("", ""))[0],
                day,
                hour,
            ),
        )
        for i in agents
    ]
    replies = await calls.run(asks)
    k.counters[REACT_FALLBACKS] += sum(parse_yes_no(r.text) is None for r in replies)
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
            focal[i].seq,
            mp.replan_messages(k.names[i], planner._day_plans[i], reaction, start, end),
        )
        for i, reaction in reacting
    ]
    wanted = []
    for (i, _), reply in zip(reacting, await calls.run(asks), strict=True):
        blocks = parse_hourly_plan(reply.text, start, end)
        k.counters[PLAN_FALLBACKS] += int(not blocks)
        cites = [focal[i].id, *(r.id for r in planner._day_plans[i])]
        wanted += [(i, "plan", f"{h:02d}:00 {what}", cites) for h, what in sorted(blocks.items())]
    for record, _ in await k.make_records(calls, step, now, wanted):
        planner.note(record.agent_index, record)
