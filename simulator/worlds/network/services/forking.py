"""The opinion network's replays and forks (simulator/services/fork_parts.py): a network run
forks at a round (services/world_forks.py); its one model is the spec's `llm`, which a theory
run has none of: a theory run forks and replays with its seed only."""

from __future__ import annotations

from simulator.domain.fork import StepPoint
from simulator.errors import UserError
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.engine.run import stored_history

RANGE_NOTE = " (round 0 is the agents table's answers)"


def last_complete(spec: NetworkSpec, rows: list[dict]) -> int:
    """Round 0 is the agents table's (no model's work): a fork starts at round 1 at the
    earliest."""
    history, _ = stored_history(spec, rows)
    return len(history) - 1


def keeps_stream(spec: NetworkSpec) -> bool:
    return spec.memory.is_stream and not spec.is_theory  # a theory run keeps no memory


def replay_refusal(doc: dict, spec: NetworkSpec, llm: str | None) -> UserError | None:
    if spec.is_theory and llm:
        return UserError("a theory run has no model", field="--llm", fix="leave --llm out")
    return None


def fork_refusal(doc: dict, spec: NetworkSpec, llm: str | None) -> UserError | None:
    if spec.is_theory and llm:
        return UserError(
            f"{doc['_id']} is a theory run, which has no model to change",
            field="--llm",
            fix="leave --llm out (a theory fork changes the seed), or fork an LLM run",
        )
    return None


def fork_notes(spec: NetworkSpec, point: StepPoint) -> list[str]:
    if not spec.is_theory:
        return []
    return [
        f"theory: continues from the state stored at round {point.n - 1} with its own "
        "draws from its seed (the parent's seed draws other updates from there, since the "
        "theory draws a whole run's updates at once)"
    ]
