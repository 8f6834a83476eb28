"""Plans in the memory stream: a day's plan, its hour blocks, their 5-15-minute actions, and
re-planning on a reaction.

Park et al. (4.3) and the reference code (persona/cognitive_modules/plan.py): each simulated day
an agent writes a broad plan from its identity and what it recalls, breaks it into hour blocks,
and decomposes a block into 5-15-minute actions when it begins (`_determine_action`,
task_decomp). Here: the day's plan at the first step of each simulated day (`memory_plan`, then
`memory_plan_hours`); at the first step whose time falls in an hour with a block not yet
decomposed, the rest of that hour as actions (`memory_plan_actions`; a reply with no usable
line is a counted fallback and the block stays one action). All are plan records: blocks cite
the day's plan, actions the block (and the conversation that re-planned them).

Reactions (engine/memory_reactions.py): with `react: every_step` (the code's `plan()`), each
agent that perceived another agent this step picks one such perception at random
(`_choose_retrieved`: others' events first, none of its own; this grid has no idle events to
skip), is asked whether to talk (`memory_decide_talk`, after decide_to_talk) with the one it
heard, and, if not, whether to react (`memory_react`): a yes re-plans its hour blocks from the
hour the next step starts in. A talk (engine/memory_talk.py) re-plans both agents' actions for
that hour. `importance_at_least` is our earlier rule (the most important new perception at
`react_importance` or more, no talk); a spec stored before these settings existed runs it at 7
with two plan levels (`MemorySettings.plan_rules`). Records, calls and counters are the keeper's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from simulator.engine.step_calls import ActorCalls
from simulator.memory.domain.parsers import parse_actions, parse_hourly_plan, parse_plan_items
from simulator.memory.domain.records import MemoryRecord
from simulator.memory.domain.settings import DAY_START_HOUR, PLAN_END_HOUR
from simulator.memory.prompting import prompts as mp

if TYPE_CHECKING:
    from simulator.memory.engine.keeper import MemoryKeeper

PLAN_FALLBACKS = "plan_fallbacks"  # counter: plans, hour breakdowns or decompositions unused
REACT_FALLBACKS = "react_fallbacks"  # counter: talk/react answers that said neither yes nor no
TALKS = "talks"  # counter: conversations held
TALK_FALLBACKS = "talk_fallbacks"  # counter: conversation lines not in the asked format
PLANNING_COUNTERS = (PLAN_FALLBACKS, REACT_FALLBACKS, TALKS, TALK_FALLBACKS)
# the code's chatting_with_buffer: a pair that talked is not asked again for 800 steps of its
# 10 simulated seconds (plan.py, _chat_react), here in simulated minutes
TALK_BUFFER_MINUTES = 800 * 10 // 60
_ACTION = re.compile(r"^(\d{2}):(\d{2})-(\d{2}):(\d{2}) (.*)$", re.S)
TALK_RECORD = "Conversation with {other}: "


@dataclass
class Actions:
    """The actions of one hour block: which block record they decompose, and each action's
    (start, end) in minutes since midnight with its text; `made` the minute of the last batch."""

    block_id: str
    made: int
    items: list[tuple[int, int, str]] = field(default_factory=list)


def minute_of_day(minute: int) -> int:
    """Minutes since midnight of a simulated minute (minute 0 is DAY_START_HOUR:00)."""
    return (DAY_START_HOUR * 60 + minute) % (24 * 60)


def action_text(start: int, end: int, what: str) -> str:
    return f"{mp.clock_text(start)}-{mp.clock_text(end)} {what}"


class DayPlanner:
    """The plans of one run's agents: what each does this hour and minute, made and re-made."""

    def __init__(self, keeper: MemoryKeeper) -> None:
        self.keeper = keeper
        names = keeper.names
        self._hourly: list[dict[tuple[int, int], tuple[str, str]]] = [{} for _ in names]
        self._actions: list[dict[tuple[int, int], Actions]] = [{} for _ in names]
        self._day_plans: list[list[MemoryRecord]] = [[] for _ in names]  # today's plan items
        self.last_talk: dict[tuple[int, int], int] = {}  # (agent, other) -> minute
        self.talks: dict[int, list[dict]] = {}  # agent -> this step's conversations (rows)

    # ---- what the prompts show ---------------------------------------------------------
    def current_plan(self, agent: int, step: int) -> str:
        """The hour block for the hour `step` starts in ('' if none), and with actions the one
        under way at the step's first minute ("block; now: action")."""
        k = self.keeper
        block = self._hourly[agent].get(k.settings.clock(k.minute(step - 1)))
        if block is None:
            return ""
        now = self._step_actions(agent, step)
        return f"{block[0]}; now: {now[0][2]}" if now else block[0]

    def current_action(self, agent: int, step: int) -> str:
        """The actions the step's minutes overlap ('' without them): the hour's list with
        60-minute steps, the current one with 10-minute steps."""
        return "; ".join(action_text(*a) for a in self._step_actions(agent, step))

    def _step_actions(self, agent: int, step: int) -> list[tuple[int, int, str]]:
        k = self.keeper
        start = k.minute(step - 1)
        entry = self._actions[agent].get(k.settings.clock(start))
        if entry is None:
            return []
        first = minute_of_day(start)
        last = first + (k.settings.minutes_per_step or 1)
        return [a for a in entry.items if a[0] < last and a[1] > first]

    # ---- making plans ------------------------------------------------------------------
    def plans_today(self, step: int) -> bool:
        """Whether `step` is the first of a simulated day (plans are made then)."""
        k = self.keeper
        if not k.settings.planning:
            return False
        start = k.settings.clock(k.minute(step - 1))[0]
        return step == 1 or start != k.settings.clock(k.minute(step - 2))[0]

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

    async def plan_actions(self, calls: ActorCalls, step: int) -> None:
        """With three plan levels: every agent whose block for the hour `step` starts in is not
        yet decomposed (a new hour, or a block re-planned by a reaction) breaks the rest of
        that hour into 5-15-minute actions, stored one minute into the step."""
        k = self.keeper
        if not k.settings.planning or k.settings.plan_rules()[0] < 3:
            return
        start = k.minute(step - 1)
        key = k.settings.clock(start)
        first = minute_of_day(start)
        span = (first, (first // 60 + 1) * 60)
        agents = [i for i in range(len(k.names)) if self._undecomposed(i, key)]
        wanted = await self.decompose(calls, step, start + 1, key[0], span, agents, {})
        for record, _ in await k.make_records(calls, step, start + 1, wanted):
            self.note(record.agent_index, record)

    def _undecomposed(self, agent: int, key: tuple[int, int]) -> bool:
        """Whether the agent has a block for this hour with no actions made from it."""
        block = self._hourly[agent].get(key)
        done = self._actions[agent].get(key)
        return block is not None and (done is None or done.block_id != block[1])

    async def decompose(
        self,
        calls: ActorCalls,
        step: int,
        now: int,
        day: int,
        span: tuple[int, int],
        agents: list[int],
        after_talk: dict[int, tuple[str, str, str]],
    ) -> list[tuple[int, str, str, list[str]]]:
        """The action records (agent, type, text, evidence) decomposing each agent's block of
        the hour over `span`; `after_talk[i]` (other, gist, talk record id) re-plans the rest
        of the hour after a conversation. A reply with no usable line keeps the block whole."""
        k = self.keeper
        key = (day, span[0] // 60)
        asks = [
            k.call(
                "memory_plan_actions",
                step,
                i,
                k.memories[i].stream.next_seq,
                mp.actions_messages(
                    k.names[i],
                    k.identity(i),
                    self._hourly[i][key][0],
                    day,
                    span,
                    after_talk[i][:2] if i in after_talk else None,
                ),
            )
            for i in agents
        ]
        wanted = []
        for i, reply in zip(agents, await calls.run(asks), strict=True):
            actions = parse_actions(reply.text, span[1] - span[0])
            k.counters[PLAN_FALLBACKS] += int(not actions)
            block_text, block_id = self._hourly[i][key]
            cites = [block_id, *([after_talk[i][2]] if i in after_talk else [])]
            at = span[0]
            for minutes, what in actions or [(span[1] - span[0], block_text)]:
                wanted.append((i, "plan", action_text(at, at + minutes, what), cites))
                at += minutes
        return wanted

    def doing(self, agent: int, now: int) -> str:
        """What the agent is doing at simulated minute `now`: its action, else its block."""
        k = self.keeper
        key = k.settings.clock(now)
        entry = self._actions[agent].get(key)
        at = minute_of_day(now)
        for start, end, what in entry.items if entry else []:
            if start <= at < end:
                return what
        return self._hourly[agent].get(key, ("", ""))[0]

    def block(self, agent: int, key: tuple[int, int]) -> tuple[str, str] | None:
        return self._hourly[agent].get(key)

    # ---- remembering plan records --------------------------------------------------------
    def note(self, agent: int, record: MemoryRecord) -> None:
        """Remember a plan record: a day's plan item (it cites nothing; a new day's first item
        starts a new list), an action (its text starts "HH:MM-HH:MM"; a later batch for the
        same block replaces the actions from its first one on, another block's replaces
        them all), or an hour block (it cites the day's plan); and a conversation's record,
        for the code's buffer between talks of the same pair."""
        k = self.keeper
        if record.type == "chat":
            for j, other in enumerate(k.names):
                if record.text.startswith(TALK_RECORD.format(other=other)):
                    self.last_talk[(agent, j)] = record.created
            return
        if record.type != "plan":
            return
        if not record.evidence:
            plans = self._day_plans[agent]
            if plans and plans[-1].created != record.created:
                plans.clear()
            plans.append(record)
            return
        day = k.settings.clock(record.created)[0]
        action = _ACTION.match(record.text)
        if action is not None:
            h1, m1, h2, m2, what = action.groups()
            start, end = int(h1) * 60 + int(m1), int(h2) * 60 + int(m2)
            key = (day, start // 60)
            entry = self._actions[agent].get(key)
            if entry is None or entry.block_id != record.evidence[0]:
                entry = self._actions[agent][key] = Actions(record.evidence[0], record.created)
            elif entry.made != record.created:
                entry.items = [a for a in entry.items if a[0] < start]
                entry.made = record.created
            entry.items.append((start, end or 24 * 60, what))
            return
        hour = int(record.text[:2])
        self._hourly[agent][(day, hour)] = (record.text[6:], record.id)
