"""The memory stream's own prompts (Park et al. 2023, Appendix and the reference code's
templates, shortened): rate a memory, ask the salient questions, infer insights with evidence.

Each is one user message sent alone, so a reviewer can read exactly what the model was asked
(the ledger stores it). Statements are numbered from 0 in the insight prompt: the
reference code's insight template numbers them from 0, and `reflection.cited` reads the numbers
the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from simulator.domain.memory.records import MemoryRecord

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
