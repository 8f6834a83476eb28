"""What a world tells replays and forks: which models its runs call, how a spec is put on
other models, what it refuses, and how one of its runs is stored and run.

Each world's `services/forking.py` is a module with these names (the registry's
`part(kind, "services.forking")`); services/replays.py, services/forks.py and
services/world_forks.py read them through the accessors below instead of naming a world.

Where a fork branches is the world's domain part: a world that stores rows
(`ROWS_COLLECTION`, counted by `ROW_UNIT`) forks at one of them (`--at N`, services/
world_forks.py); a world that stores messages forks at a message (`--at DAY:INDEX`,
services/forks.py). The names marked optional may be left out: the house's default below
serves a world whose spec names its one model `llm` (None: a run that calls no model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, cast

from pydantic import BaseModel

from simulator.domain.fork import StepPoint
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.world import domain_of
from simulator.errors import UserError
from simulator.worlds import part


class ForkPart(Protocol):
    """What replays and forks need of a world beyond its runs part (services/run_parts.py):
    a replay or fork is stored and run as any run of the world (services/runs.py)."""

    # optional: the spec with each model replaced by `replace(model)`
    def with_models(
        self, spec: BaseModel, replace: Callable[[LLMChoice], LLMChoice]
    ) -> BaseModel: ...

    # optional: why a replay of `doc` (with --llm `llm`) cannot re-run it as it ran, or None
    def replay_refusal(self, doc: dict, spec: BaseModel, llm: str | None) -> UserError | None: ...

    # optional, a world forked at a row: why `doc` cannot be forked as asked, or None
    def fork_refusal(self, doc: dict, spec: BaseModel, llm: str | None) -> UserError | None: ...

    # optional, a world forked at a row: whether the run keeps a memory stream (not forked yet)
    def keeps_stream(self, spec: BaseModel) -> bool: ...

    # a world forked at a message: the spec's changes from the fork point on (the seed aside),
    # each said in `notes` (what the fork changes) or `defaults` (what nobody chose)
    def fork_changes(
        self,
        doc: dict,
        experiment: BaseModel,
        spec: BaseModel,
        *,
        llm: str | None,
        llm_for: Sequence[str],
        variants: Sequence[str],
        speaker: str | None,
        notes: list[str],
        defaults: list[str],
    ) -> dict: ...

    # a world forked at a row: the last complete row unit (step, round) of `rows`
    def last_complete(self, spec: BaseModel, rows: list[dict]) -> int: ...

    # optional, a world forked at a row: said after the range a fork may start in
    RANGE_NOTE: str

    # optional, a world forked at a row: what else the fork's notes say
    def fork_notes(self, spec: BaseModel, point: StepPoint) -> list[str]: ...


def fork_part(kind: str) -> ForkPart:
    """The world `kind`'s replay and fork part (imported on first use)."""
    return cast(ForkPart, part(kind, "services.forking"))


def forks_at_rows(kind: str) -> bool:
    """Whether the world's forks branch at a row (a step, a round), not at a message."""
    return domain_of(kind).ROW_UNIT is not None


def spec_of(kind: str, data: dict) -> BaseModel:
    """A stored spec as the world's model."""
    return domain_of(kind).Spec.model_validate(data)


def models(kind: str, spec: BaseModel) -> list[LLMChoice]:
    """Every model a run of `kind` with `spec` calls, in the order `with_models` replaces them
    (none: a run without a model)."""
    from simulator.services import runs

    return runs.models(kind, spec)


def with_models(kind: str, spec: BaseModel, replace: Callable[[LLMChoice], LLMChoice]) -> BaseModel:
    """`spec` with every model it calls replaced by `replace(model)`."""
    world = fork_part(kind)
    if hasattr(world, "with_models"):
        return world.with_models(spec, replace)
    return spec.model_copy(update={"llm": replace(getattr(spec, "llm"))})  # noqa: B009


def replay_refusal(kind: str, doc: dict, spec: BaseModel, llm: str | None) -> UserError | None:
    world = fork_part(kind)
    return world.replay_refusal(doc, spec, llm) if hasattr(world, "replay_refusal") else None


def fork_refusal(kind: str, doc: dict, spec: BaseModel, llm: str | None) -> UserError | None:
    world = fork_part(kind)
    return world.fork_refusal(doc, spec, llm) if hasattr(world, "fork_refusal") else None


def keeps_stream(kind: str, spec: BaseModel) -> bool:
    world = fork_part(kind)
    if hasattr(world, "keeps_stream"):
        return world.keeps_stream(spec)
    memory = getattr(spec, "memory", None)  # a world without memory settings keeps none
    return bool(memory is not None and memory.is_stream)


def range_note(kind: str) -> str:
    return getattr(fork_part(kind), "RANGE_NOTE", "")


def fork_notes(kind: str, spec: BaseModel, point: StepPoint) -> list[str]:
    world = fork_part(kind)
    return world.fork_notes(spec, point) if hasattr(world, "fork_notes") else []
