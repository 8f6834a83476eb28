"""Conversations between two agents of the grid's memory stream, as the reference code holds
them (persona/cognitive_modules/plan.py `_should_react`, `_chat_react`; converse.py
`agent_chat_v2`).

Each agent with a focal perception of another agent (engine/memory_planning.py) is asked
whether it would start a conversation with that agent (`memory_decide_talk`, after the code's
decide_to_talk). A pair talks when the starter says yes, neither is already in a conversation
this step, and the pair has not talked within the code's buffer (TALK_BUFFER_MINUTES). The two
then speak in turn, starter first, one call a line (`memory_talk`: the speaker's identity, its
records retrieved for the other's name and the last four lines, the conversation so far),
until a line ends it or `talk_turns` lines are said (the code: 8 rounds of two lines). What we
leave out: the code's relationship summary before each line (one more call a line) and its
thoughts on the conversation afterwards. The conversation is one chat record in both streams
and is on both agents' rows (`talks`). With three plan levels both agents' actions for the
hour are re-planned as the code's `_create_react` does: the talk first, for the code's length
(ceil(characters / 8 / 30) minutes), then the rest of the hour decomposed again.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simulator.engine.step_calls import ActorCalls
from simulator.memory.domain.parsers import parse_utterance, parse_yes_no
from simulator.memory.domain.records import MemoryRecord
from simulator.memory.engine.planning import (
    REACT_FALLBACKS,
    TALK_BUFFER_MINUTES,
    TALK_FALLBACKS,
    TALK_RECORD,
    TALKS,
    action_text,
    minute_of_day,
)
from simulator.memory.prompting import prompts as mp

if TYPE_CHECKING:
    from simulator.memory.engine.planning import DayPlanner

NOTHING = "(nothing yet)"
LAST_LINES = 4  # the lines of the conversation so far the code retrieves with


async def talk_or_not(
    planner: DayPlanner,
    calls: ActorCalls,
    step: int,
    now: int,
    focal: dict[int, tuple[MemoryRecord, int]],
) -> set[int]:
    """Ask the agents free to talk whether to start a conversation with the one they heard,
    hold the conversations, and return the agents who answered yes (they are not asked to
    react as well, as the code asks decide_to_react only when it will not talk)."""
    k = planner.keeper
    day, hour = k.settings.clock(now)
    time = mp.clock_text(minute_of_day(now))
    free = [
        i
        for i, (_, j) in focal.items()
        if hour != 23  # the code talks at no hour 23
        and now - planner.last_talk.get((i, j), -TALK_BUFFER_MINUTES) >= TALK_BUFFER_MINUTES
    ]
    if not free:
        return set()
    found = await k.recall_pairs(now, [(i, k.names[focal[i][1]]) for i in free])
    asks = [
        k.call(
            "memory_decide_talk",
            step,
            i,
            focal[i][0].seq,
            mp.decide_talk_messages(
                k.names[i],
                k.names[focal[i][1]],
                mp.recalled_text(records, NOTHING),
                planner.doing(i, now),
                focal[i][0].text,
                day,
                time,
            ),
        )
        for i, records in zip(free, found, strict=True)
    ]
    answers = [parse_yes_no(reply.text) for reply in await calls.run(asks)]
    k.counters[REACT_FALLBACKS] += sum(a is None for a in answers)
    willing = [i for i, yes in zip(free, answers, strict=True) if yes]
    busy: set[int] = set()
    pairs = []
    for i in willing:  # in agent order: the first to start a talk holds both agents
        j = focal[i][1]
        if i not in busy and j not in busy:
            busy |= {i, j}
            pairs.append((i, j, focal[i][0].text))
    if pairs:
        await _hold(planner, calls, step, now, pairs)
    return set(willing)


async def _hold(
    planner: DayPlanner, calls: ActorCalls, step: int, now: int, pairs: list[tuple[int, int, str]]
) -> None:
    """Every pair's conversation, in lockstep (each turn's lines are sent together), then
    the records, rows and plans each leaves."""
    k = planner.keeper
    day = k.settings.clock(now)[0]
    time = mp.clock_text(minute_of_day(now))
    most = k.settings.plan_rules()[4]
    lines: list[list[tuple[str, str]]] = [[] for _ in pairs]
    open_ = list(range(len(pairs)))
    turn = 0
    while open_:
        speakers = [(pairs[n][turn % 2], pairs[n][1 - turn % 2]) for n in open_]
        queries = [
            "\n".join([k.names[other], *(f"{w}: {t}" for w, t in lines[n][-LAST_LINES:])])
            for n, (_, other) in zip(open_, speakers, strict=True)
        ]
        asked = [(s, q) for (s, _), q in zip(speakers, queries, strict=True)]
        found = await k.recall_pairs(now, asked)
        asks = [
            k.call(
                "memory_talk",
                step,
                s,
                turn,
                mp.talk_messages(
                    (k.names[s], k.identity(s)),
                    k.names[o],
                    (k.names[pairs[n][0]], k.names[pairs[n][1]], pairs[n][2]),
                    mp.recalled_text(records, NOTHING),
                    lines[n],
                    day,
                    time,
                ),
            )
            for n, (s, o), records in zip(open_, speakers, found, strict=True)
        ]
        still = []
        for n, (s, _), reply in zip(open_, speakers, await calls.run(asks), strict=True):
            said = parse_utterance(reply.text)
            k.counters[TALK_FALLBACKS] += int(said.fallback)
            if said.text:
                lines[n].append((k.names[s], said.text))
            if not said.end and len(lines[n]) < most:
                still.append(n)
        open_ = still
        turn += 1
    await _remember(planner, calls, step, now, pairs, lines)


async def _remember(
    planner: DayPlanner,
    calls: ActorCalls,
    step: int,
    now: int,
    pairs: list[tuple[int, int, str]],
    lines: list[list[tuple[str, str]]],
) -> None:
    k = planner.keeper
    said = [" / ".join(f"{w}: {t}" for w, t in convo) for convo in lines]
    wanted = []
    for (i, j, _), text in zip(pairs, said, strict=True):
        for me, other in ((i, j), (j, i)):
            wanted.append((me, "chat", TALK_RECORD.format(other=k.names[other]) + text, []))
    made = [r for r, _ in await k.make_records(calls, step, now, wanted)]
    talk_ids: dict[int, str] = {}
    for record in made:
        planner.note(record.agent_index, record)
        talk_ids[record.agent_index] = record.id
    k.counters[TALKS] += len(pairs)
    for (i, j, _), convo in zip(pairs, lines, strict=True):
        row = {"started_by": k.names[i], "lines": [list(line) for line in convo]}
        planner.talks.setdefault(i, []).append({"with": k.names[j], **row})
        planner.talks.setdefault(j, []).append({"with": k.names[i], **row})
    if k.settings.plan_rules()[0] >= 3:
        await _replan(planner, calls, step, now, pairs, said, talk_ids)


async def _replan(
    planner: DayPlanner,
    calls: ActorCalls,
    step: int,
    now: int,
    pairs: list[tuple[int, int, str]],
    said: list[str],
    talk_ids: dict[int, str],
) -> None:
    """Both agents' actions for the hour `now` falls in: the talk for the code's length, then
    the rest of the hour decomposed again (one memory_plan_actions call each)."""
    k = planner.keeper
    key = k.settings.clock(now)
    start = minute_of_day(now)
    end = (start // 60 + 1) * 60
    wanted = []
    rest: dict[int, list[int]] = {}  # the minute a talk ends -> who re-plans from it
    after: dict[int, tuple[str, str, str]] = {}
    for (i, j, _), text in zip(pairs, said, strict=True):
        length = max(1, math.ceil(int(len(text) / 8) / 30))  # the code's convo_length
        until = min(start + length, end)
        for me, other in ((i, j), (j, i)):
            block = planner.block(me, key)
            if block is None:
                continue
            talked = action_text(start, until, f"talking with {k.names[other]}")
            wanted.append((me, "plan", talked, [block[1], talk_ids[me]]))
            if until < end:
                rest.setdefault(until, []).append(me)
                after[me] = (k.names[other], text[:300], talk_ids[me])
    for record, _ in await k.make_records(calls, step, now, wanted):
        planner.note(record.agent_index, record)
    for until, agents in sorted(rest.items()):
        mine = {i: after[i] for i in agents}
        agents = sorted(agents)
        more = await planner.decompose(calls, step, now, key[0], (until, end), agents, mine)
        for record, _ in await k.make_records(calls, step, now, more):
            planner.note(record.agent_index, record)
