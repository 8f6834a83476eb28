"""The market as a world of the step loop (simulator/engine/step_loop.py): each round the buyer
and the seller are asked at once for a price given the other's last offer; the reply's first
number is the offer, and a reply without one keeps the agent's last offer (`fallback`, counted
as `offer_fallbacks`). The run ends after its rounds or at the first round whose offers cross.
A round's two rows are stored together when both replies are in; a resumed run replays the
answered calls of the round it was stopped in from the ledger."""

from __future__ import annotations

from dataclasses import dataclass, field

from market_world.domain.kind import AGENTS, ROWS_COLLECTION, Spec, crossed, offer_in
from simulator.engine.step_calls import REPLAYED, ActorCall, ActorCalls, placed_params, replay_book
from simulator.engine.step_loop import StepRun, run_world
from simulator.llm.access import LLMAccess

FALLBACKS = "offer_fallbacks"


def prompt(spec: Spec, agent: int, t: int, offers: list[float]) -> list[dict]:
    """What the buyer (0) or the seller (1) reads in round t, given the last offers."""
    me, other = AGENTS[agent], AGENTS[1 - agent]
    return [
        {
            "role": "system",
            "content": f"A market for {spec.settings.item}. Answer with your price in dollars "
            "as the first number of your reply.",
        },
        {
            "role": "user",
            "content": f"Round {t} of {spec.settings.rounds}. You are the {me}. The {other}'s "
            f"last offer: "
            f"{offers[1 - agent]:g}. Your last offer: {offers[agent]:g}. Your price?",
        },
    ]


def last_offers(spec: Spec, rows: list[dict]) -> tuple[int, list[float]]:
    """The complete rounds stored and the offers after them (the starting ones before any)."""
    by_round: dict[int, dict[int, float]] = {}
    for row in rows:
        by_round.setdefault(row["round"], {})[row["agent_index"]] = row["offer"]
    offers = [spec.settings.buyer_start, spec.settings.seller_start]
    done = 0
    while len(by_round.get(done + 1, {})) == len(AGENTS):
        done += 1
        offers = [by_round[done][i] for i in range(len(AGENTS))]
    return done, offers


@dataclass
class Market:
    """The world's rules for one run (`run.recorder` stores, `llms` answers)."""

    run: StepRun
    spec: Spec
    llms: LLMAccess
    done: int = 0  # complete rounds stored
    offers: list[float] = field(default_factory=list)  # the offers after them
    partial: set[str] = field(default_factory=set)  # rows of the next round a killed run stored

    async def prepare(self) -> None:
        recorder = self.run.recorder
        recorder.counters.setdefault(FALLBACKS, 0)
        recorder.counters.setdefault(REPLAYED, 0)
        rows = recorder.load_rows(ROWS_COLLECTION)
        self.done, self.offers = last_offers(self.spec, rows)
        self.partial = {r["_id"] for r in rows if r["round"] == self.done + 1}
        for row in rows:  # a fork's shared rows are its parent's work: not counted
            if row["round"] <= self.done and row["conversation_id"] == self.run.run_id:
                recorder.counters["messages"] += 1
                recorder.counters[FALLBACKS] += int(row["fallback"])
        self.calls = ActorCalls(recorder, self.llms, replay_book(recorder.load_calls()))

    async def advance(self) -> bool:
        return self.done < self.spec.settings.rounds and not crossed(*self.offers)

    async def step(self) -> None:
        t, spec = self.done + 1, self.spec
        calls = [
            ActorCall(
                "offer",
                t,
                i,
                name,
                spec.llm,
                prompt(spec, i, t, self.offers),
                placed_params(spec.llm.params, spec.seed, "offer", t, i, 0),
                f"the {name}'s offer in round {t}",
            )
            for i, name in enumerate(AGENTS)
        ]
        replies = await self.calls.run(calls)
        rows = []
        for i, reply in enumerate(replies):
            offer = offer_in(reply.text)
            rows.append(
                {
                    "conversation_id": self.run.run_id,
                    "round": t,
                    "agent": AGENTS[i],
                    "agent_index": i,
                    "offer": self.offers[i] if offer is None else offer,
                    "reply": reply.text,
                    "fallback": offer is None,
                }
            )
        recorder = self.run.recorder
        await recorder.record_step_rows(rows, self.partial, ROWS_COLLECTION)
        recorder.counters[FALLBACKS] += sum(r["fallback"] for r in rows)
        self.partial, self.done = set(), t
        self.offers = [r["offer"] for r in rows]

    def done_fields(self) -> dict:
        return {}


async def run_market(run: StepRun, spec: Spec, llms: LLMAccess) -> str:
    return await run_world(run, Market(run, spec, llms))
