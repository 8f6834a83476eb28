"""`conversation fork`: branch a stored chat at one message, optionally with the researcher's
text there, and continue it under changed settings, N times with N seeds; or a run whose world
stores rows (a grid's steps, a network's rounds) at one of them (services/world_forks.py),
under another model or seed. What a world changes, stores and runs is its part
(services/fork_parts.py).

Each continuation is a run of its own (`fork_of`, `fork_at`, `fork_edit`, `fork_group`,
`fork_repetition`) that stores only what it writes; the messages (step or round rows) before
the fork point are read from the parent (store/lineage.py). It runs, resumes and is analysed
like any run of its kind."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from simulator.domain.fork import (
    ForkEdit,
    ForkPoint,
    StepPoint,
    parse_edit,
    repetition_seeds,
    say_seeds,
)
from simulator.domain.ids import new_id
from simulator.domain.world import domain_of
from simulator.engine import events as ev
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.base import FatalBackendError
from simulator.services import runs as run_service
from simulator.services import world_forks
from simulator.services.experiments import ExperimentView
from simulator.services.fork_parts import fork_part, forks_at_rows, models, spec_of
from simulator.services.runs import RunOutcome, experiment_snapshot, run_view
from simulator.store import cascade, lineage
from simulator.store.store import Store
from simulator.worlds import kind_of

MAX_REPETITIONS = 1000  # a larger design is a fork sweep (sweep YAML `fork:`)


@dataclass
class ForkPlan:
    """What a fork will store and run: one spec per repetition, and every choice explained."""

    parent: dict
    view: ExperimentView
    point: ForkPoint | StepPoint  # a chat's DAY:INDEX; a grid's step, a network's round
    edit: ForkEdit | None
    specs: list  # the spec of each repetition: a model of the parent's world (its `Spec`)
    notes: list[str] = field(default_factory=list)  # what the fork changes (`fork_notes`)
    defaults: list[str] = field(default_factory=list)  # choices nobody made: in each spec
    group: str = ""  # shared by the repetitions of one fork command (a fork sweep: its id)
    shared: int = 0  # messages (step or round rows) before the fork point, read from the parent
    kind: str = ""  # the parent's world (simulator.worlds.kind_of)

    @property
    def parent_id(self) -> str:
        return self.parent["_id"]


def check_parent(doc: dict, spec: BaseModel | None = None) -> None:
    """Refuse, in a sentence, a run a fork cannot branch at a message (the menu's Fork here
    and fork sweeps branch chats only; `conversation fork` branches a run whose world stores
    rows at a step or a round: world_forks). `spec`: the run's, when already read."""
    kind = kind_of(doc)
    if forks_at_rows(kind):
        unit = domain_of(kind).ROW_UNIT
        raise UserError(
            f"{doc['_id']} is a {kind} run; forks branch chat conversations at a message",
            fix=f"fork it at a {unit} with `llm-sim conversation fork {doc['_id']} --at N`, "
            f"or re-run it with `llm-sim conversation replay {doc['_id']}`",
        )
    if (spec or spec_of(kind, doc["spec"])).memory.is_stream:  # type: ignore[attr-defined]
        raise UserError(
            f"{doc['_id']} keeps a memory stream, whose records a fork would have to share up "
            "to the fork point; forks of memory-stream chats are not built yet",
            fix="fork a chat whose memory is summary or none",
        )


def shared_message(messages: list[dict], point: ForkPoint, doc: dict, field: str = "--at") -> dict:
    """The parent's message at the fork point, or a UserError naming the places that exist."""
    for message in messages:
        if (message["day"], message["index"]) == (point.day, point.index):
            return message
    on_day = [m for m in messages if m["day"] == point.day]
    where = (
        f"day {point.day} holds messages {point.day}:0 to {point.day}:{len(on_day) - 1}"
        if on_day
        else f"it has no message on day {point.day}"
    )
    return _refuse_point(doc, point, where, field)


def _refuse_point(doc: dict, point: ForkPoint, where: str, field: str = "--at") -> dict:
    raise UserError(
        f"{doc['_id']} has no message at {point}: {where}",
        field=field,
        fix=f"pick a stored message's place (`llm-sim conversation show {doc['_id']}` prints "
        "each as [DAY:INDEX])",
    )


def branch(
    store: Store,
    parent_id: str,
    at: str,
    edit: str | None = None,
    *,
    at_field: str = "--at",
) -> ForkPlan:
    """The parent checked, the fork point found and the edit read: a plan whose one spec is the
    parent's, unchanged (`plan` changes it; a fork sweep builds one spec per cell from it).
    Nothing is stored."""
    doc = store.conversations.get(parent_id)
    kind = kind_of(doc)
    spec = None if forks_at_rows(kind) else spec_of(kind, doc["spec"])
    check_parent(doc, spec)
    point = ForkPoint.parse(at, at_field)
    messages, _ = lineage.full_transcript(store, doc)
    message = shared_message(messages, point, doc, at_field)
    text = parse_edit(edit)
    shared = sum(1 for m in messages if point.holds(m["day"], m["index"]))
    place = f"{point} (day {point.day}'s message #{point.index + 1})"
    notes = [f"fork of {parent_id} at {place}: shares its {_count(shared)} before it"]
    fork_edit = None
    if text is not None:
        fork_edit = ForkEdit(
            point.day, point.index, message["speaker"], message["role"], text, message["text"]
        )
        notes.append(f"edit: {message['speaker']} says the researcher's text at {point}")
    else:
        notes.append(f"the message at {point} is generated again")
    view = run_view(doc, domain_of(kind).from_stored(experiment_snapshot(store, doc)))
    return ForkPlan(doc, view, point, fork_edit, [spec], notes, [], "", shared, kind)


def plan(
    store: Store,
    parent_id: str,
    at: str,
    *,
    edit: str | None = None,
    llm: str | None = None,
    llm_for: Sequence[str] = (),
    variants: Sequence[str] = (),
    speaker: str | None = None,
    repetitions: int = 1,
    seed: int | None = None,
) -> ForkPlan:
    """Read and check the parent and every change; nothing is stored."""
    doc = store.conversations.get(parent_id)
    kind = kind_of(doc)
    at_rows = forks_at_rows(kind)
    if at_rows:  # options that mean nothing there are refused first
        world_forks.refuse_chat_options(
            doc, kind, edit=edit, llm_for=llm_for, variants=variants, speaker=speaker
        )
    if not 1 <= repetitions <= MAX_REPETITIONS:
        raise UserError(
            f"{repetitions} repetitions is not a number of continuations",
            field="--repetitions",
            fix=f"give 1 to {MAX_REPETITIONS}; a larger design is a fork sweep",
        )
    if at_rows:
        world = world_forks.branch(store, doc, at, llm=llm, repetitions=repetitions, seed=seed)
        return ForkPlan(
            doc,
            world.view,
            world.point,
            edit=None,
            specs=world.specs,
            notes=world.notes,
            defaults=world.defaults,
            group=new_id("fork"),
            shared=world.shared,
            kind=kind,
        )
    found = branch(store, parent_id, at, edit)
    spec, experiment = found.specs[0], found.view.experiment
    notes, defaults = found.notes, found.defaults
    update = fork_part(kind).fork_changes(
        doc,
        experiment,
        spec,
        llm=llm,
        llm_for=llm_for,
        variants=variants,
        speaker=speaker,
        notes=notes,
        defaults=defaults,
    )
    base = spec.seed if seed is None else seed
    say_seeds(seed, base, repetitions, notes, defaults)
    found.specs = [
        spec.model_copy(update={**update, "seed": seed_r, "defaults_applied": list(defaults)})
        for seed_r in repetition_seeds(base, repetitions)
    ]
    found.group = new_id("fork")
    return found


def _count(shared: int) -> str:
    return f"{shared} message{'s' if shared != 1 else ''}"


def fork_fields(plan: ForkPlan, repetition: int) -> dict:
    """What a fork's document says about where it came from."""
    return {
        "fork_of": plan.parent_id,
        "fork_at": plan.point.as_dict(),
        "fork_edit": plan.edit.as_dict() if plan.edit else None,
        "fork_group": plan.group,
        "fork_repetition": repetition,
        "fork_notes": list(plan.notes),
        # messages (step or round rows) read from the parent: listings count them
        "fork_shared": plan.shared,
    }


def create(store: Store, plan: ForkPlan, user: str) -> list[dict]:
    """Store the continuations, pending; on a failure none of them stays."""
    created: list[dict] = []
    try:
        for repetition, spec in enumerate(plan.specs, start=1):
            extra = fork_fields(plan, repetition)
            created.append(run_service.create_run(store, plan.view, spec, user, extra))
    except BaseException:
        for doc in created:
            cascade.delete_conversation(store.db, doc["_id"])
        raise
    return created


async def preflight(plan: ForkPlan, llms: LLMAccess) -> None:
    """Check every model the continuations call before anything is written; a failure is a
    UserError (exit 2)."""
    try:
        await llms.preflight(models(plan.kind, plan.specs[0]))
    except FatalBackendError as exc:
        raise UserError(str(exc)) from None


async def run_all(
    store: Store,
    docs: list[dict],
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
    on_done: Callable[[RunOutcome], None] = lambda outcome: None,
) -> list[RunOutcome]:
    """The continuations one after another (a fork sweep runs them concurrently)."""
    stop = stop or asyncio.Event()
    outcomes = []
    for doc in docs:
        if stop.is_set():
            break
        outcome = await run_service.run(store, doc["_id"], llms, on_event, stop, doc=doc)
        outcomes.append(outcome)
        on_done(outcome)
    return outcomes
