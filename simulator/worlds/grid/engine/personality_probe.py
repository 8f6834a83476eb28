"""The personality test of a grid run (`personality:`; domain/personality.py): every agent asked
every item of the inventory, one call per item, before step 1 and after the last step.

Each call goes through the world's ActorCalls (purpose `grid_personality`), so the ledger holds
it and a resumed run replays what was answered: the test before step 1 is asked from the
run's starting state (a pure function of the spec), so a run killed after it asks the same
prompts again and gets the stored answers back instead of sending them. An answer naming
neither A nor B is counted (`personality_fallbacks`) and stored as unanswered, never as A or B.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.domain.llm_choice import LLMChoice
from simulator.engine.step_calls import ActorCall, ActorCalls, placed_params
from simulator.worlds.grid.domain.personality import PersonalityProbe, load_inventory, parse_choice

PURPOSE = "grid_personality"
PERSONALITY_FALLBACKS = "personality_fallbacks"  # counter: answers naming neither A nor B


@dataclass(frozen=True)
class TestTakers:
    """Who takes the test, through which model, and where it sits in the ledger."""

    names: list[str]
    llm: LLMChoice
    seed: int | None
    step: int  # 0 before step 1; the step after the last for the final test


async def take_test(
    calls: ActorCalls,
    probe: PersonalityProbe,
    who: TestTakers,
    when: str,
    fields: list[dict],
    counters: dict[str, int],
) -> list[dict]:
    """One entry per agent: its choices item by item (A, B or None) and the replies.
    `fields[i]` fills agent i's prompt (the grid's prompt fields at that moment)."""
    counters.setdefault(PERSONALITY_FALLBACKS, 0)
    inventory = load_inventory(probe.inventory)
    asked = [
        ActorCall(
            PURPOSE,
            who.step,
            n,
            who.names[i],
            who.llm,
            [
                {
                    "role": "user",
                    "content": probe.prompt.format(
                        **fields[i], statement_a=item.a, statement_b=item.b
                    ),
                }
            ],
            placed_params(who.llm.params, who.seed, PURPOSE, who.step, i, n),
            f"{who.names[i]}'s personality item {item.id} ({when})",
        )
        for i in range(len(who.names))
        for n, item in enumerate(inventory.items)
    ]
    replies = await calls.run(asked)
    per_item = len(inventory.items)
    tests = []
    for i, name in enumerate(who.names):
        mine = replies[i * per_item : (i + 1) * per_item]
        choices = [
            parse_choice(reply.text, item.a, item.b)
            for item, reply in zip(inventory.items, mine, strict=True)
        ]
        counters[PERSONALITY_FALLBACKS] += sum(c is None for c in choices)
        tests.append(
            {
                "when": when,
                "step": who.step,
                "agent": name,
                "agent_index": i,
                "choices": choices,
                "replies": [reply.text.strip() for reply in mine],
            }
        )
    return tests
