"""The memory stream's own prompts (Park et al. 2023, Appendix and the reference code's
templates, shortened): rate a memory, ask the salient questions, infer insights with evidence.

Each is one user message sent alone, so a reviewer can read exactly what the model was asked
(the ledger stores it). Statements are numbered from 0 in the insight prompt: the
reference code's insight template numbers them from 0, and `reflection.cited` reads the numbers
the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from simulator.memory.domain.records import MemoryRecord

NUMBER_BASE = 0  # the first statement shown is "0.", as `reflection.cited` counts

IMPORTANCE = (
    "On the scale of 1 to 10, where 1 is purely mundane (e.g., brushing teeth, making bed) "
    "and 10 is extremely poignant (e.g., a break up, college acceptance), rate the likely "
    "poignancy of the following piece of memory of {name}.\n"
    "Memory: {memory}\n"
    "Answer with one integer from 1 to 10.\n"
    "Rating:"
)
QUESTIONS = (
    "{statements}\n\n"
    "Given only the information above, what are the {count} most salient high-level "
    "questions we can answer about the subjects in the statements? Write one question per line."
)
INSIGHTS = (
    "Statements about {name}\n{statements}\n\n"
    "What {count} high-level insights can you infer from the above statements? Write one per "
    "line, each followed by the numbers of the statements it rests on, in this format:\n"
    "insight (because of 1, 5, 3)"
)


DAY_PLAN = (
    "{identity}\n\nWhat {name} recalls:\n{recalled}\n\n"
    "It is day {day}, {hour:02d}:00. Write {name}'s broad plan for the rest of today in 5 to 8 "
    "items, one per line, each starting with its time (e.g. 09:00)."
)
HOURLY_PLAN = (
    "{name}'s plan for today:\n{plan}\n\n"
    "Break this plan into hour-by-hour blocks from {start:02d}:00 to {end:02d}:00: one line per "
    "hour, each starting with the hour (e.g. {start:02d}:00), then what {name} does."
)


REACT = (
    "It is day {day}, {hour:02d}:00. {name}'s plan for this hour: {block}\n"
    "{name} just perceived: {observation}\n\n"
    "Should {name} react to this and change the plan? Answer yes or no on the first line; "
    "if yes, say on the next line what {name} will do instead."
)
REPLAN = (
    "{name}'s plan for today:\n{plan}\n{name} now means to: {reaction}\n\n"
    "Write {name}'s new hour-by-hour blocks from {start:02d}:00 to {end:02d}:00: one line per "
    "hour, each starting with the hour (e.g. {start:02d}:00), then what {name} does."
)


def _user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def importance_messages(name: str, memory: str) -> list[dict]:
    return _user(IMPORTANCE.format(name=name, memory=memory))


def numbered(records: Sequence[MemoryRecord]) -> str:
    return "\n".join(f"{i + NUMBER_BASE}. {r.text}" for i, r in enumerate(records))


def questions_messages(records: Sequence[MemoryRecord], count: int) -> list[dict]:
    return _user(QUESTIONS.format(statements=numbered(records), count=count))


def insights_messages(name: str, records: Sequence[MemoryRecord], count: int) -> list[dict]:
    return _user(INSIGHTS.format(name=name, statements=numbered(records), count=count))


def recalled_text(records: Sequence[MemoryRecord], empty: str) -> str:
    """What the world's `{memory}` field shows: the retrieved records, best first."""
    if not records:
        return empty
    return "\n".join(f"- {r.text}" for r in records)


def day_plan_messages(name: str, identity: str, recalled: str, day: int, hour: int) -> list[dict]:
    return _user(
        DAY_PLAN.format(
            name=name,
            identity=identity or f"You are {name}.",
            recalled=recalled,
            day=day,
            hour=hour,
        )
    )


def hourly_plan_messages(
    name: str, plan: Sequence[MemoryRecord], start: int, end: int
) -> list[dict]:
    items = "\n".join(r.text for r in plan)
    return _user(HOURLY_PLAN.format(name=name, plan=items, start=start, end=end))


def react_messages(name: str, observation: str, block: str, day: int, hour: int) -> list[dict]:
    return _user(
        REACT.format(
            name=name, observation=observation, block=block or "(none)", day=day, hour=hour
        )
    )


def replan_messages(
    name: str, plan: Sequence[MemoryRecord], reaction: str, start: int, end: int
) -> list[dict]:
    items = "\n".join(r.text for r in plan) or "(no plan)"
    return _user(REPLAN.format(name=name, plan=items, reaction=reaction, start=start, end=end))


# The third level, reacting and talking, after the reference code's task_decomp_v2,
# decide_to_talk_v1 and iterative_convo_v1 templates (persona/prompt_template/), shortened
ACTIONS = (
    "{identity}\n\nIt is day {day}, {start}. {name}'s plan from {start} to {end}: {block}\n"
    "{context}"
    "In 5 to 15 minute increments, list the subtasks {name} does from {start} to {end} "
    "(total duration in minutes: {total}), one per line, in this format:\n"
    "1) {name} is <subtask> (duration in minutes: 15, minutes left: {left})"
)
AFTER_TALK = "{name} has just talked with {other}, which took until {start}: {gist}\n"
DECIDE_TALK = (
    "Context: {recalled}\n"
    "Right now, it is day {day}, {time}. {name} is {doing}.\n"
    "{name} hears {other} say: {observation}\n\n"
    "Question: Would {name} initiate a conversation with {other}? "
    "Answer yes or no on the first line."
)
TALK = (
    "{identity}\n\nHere is the memory that is in {name}'s head:\n{recalled}\n\n"
    "Current context: it is day {day}, {time}. {starter} heard {target} say: {observation}\n"
    "{starter} is initiating a conversation with {target}.\n\n"
    "{name} and {other} are chatting. Here is their conversation so far:\n{lines}\n\n"
    "---\nTask: Given the above, what should {name} say to {other} next in the conversation? "
    "And does it end the conversation? Answer with JSON only, in this format:\n"
    '{{"utterance": "<what {name} says>", "end": false}}'
)


def clock_text(minute_of_day: int) -> str:
    """ "HH:MM" of a minute since midnight."""
    return f"{minute_of_day // 60 % 24:02d}:{minute_of_day % 60:02d}"


def actions_messages(
    name: str,
    identity: str,
    block: str,
    day: int,
    span: tuple[int, int],
    after_talk: tuple[str, str] | None = None,
) -> list[dict]:
    """Decompose `block` over `span` (minutes since midnight); `after_talk` (other, gist): the
    rest of the block after a conversation, as the code's new_decomp_schedule re-plans it."""
    start, end = (clock_text(m) for m in span)
    context = (
        AFTER_TALK.format(name=name, other=after_talk[0], start=start, gist=after_talk[1])
        if after_talk
        else ""
    )
    total = span[1] - span[0]
    return _user(
        ACTIONS.format(
            identity=identity or f"You are {name}.",
            name=name,
            day=day,
            start=start,
            end=end,
            block=block or "(no plan)",
            context=context,
            total=total,
            left=max(total - 15, 0),
        )
    )


def decide_talk_messages(
    name: str, other: str, recalled: str, doing: str, observation: str, day: int, time: str
) -> list[dict]:
    return _user(
        DECIDE_TALK.format(
            name=name,
            other=other,
            recalled=recalled,
            doing=doing or "going about the day",
            observation=observation,
            day=day,
            time=time,
        )
    )


def talk_messages(
    speaker: tuple[str, str],
    other: str,
    opening: tuple[str, str, str],
    recalled: str,
    lines: Sequence[tuple[str, str]],
    day: int,
    time: str,
) -> list[dict]:
    """One line of a conversation: `speaker` (name, identity) answers `other`; `opening`
    (starter, target, what the starter heard) is how it began."""
    name, identity = speaker
    starter, target, observation = opening
    said = "\n".join(f"{who}: {text}" for who, text in lines) or "(nothing yet)"
    return _user(
        TALK.format(
            identity=identity or f"You are {name}.",
            name=name,
            other=other,
            recalled=recalled,
            day=day,
            time=time,
            starter=starter,
            target=target,
            observation=observation,
            lines=said,
        )
    )
