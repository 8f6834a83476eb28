"""`conversation fork` of a run whose world stores rows (a grid's steps, a network's rounds):
branch it at one of them and continue it under another model or seed, once per repetition.

A world's fork is a run of the parent's kind (`fork_of`, `fork_at` {step: N} or {round: N}:
the world's ROW_UNIT) whose spec is the parent's with the model and seed changed: same world,
start cells, personas, graph snapshots, agents table and scenario. It stores only the rows from
N on; the rows before N are read from the parent (store/lineage.py `world_prefix`), and the
engine resumes from them exactly as a run killed after step N-1 resumes from its own, so a fork
with the parent's model and seed sends the parent's prompts with the parent's per-call seeds
(they derive from where each call sits). What differs between worlds (the last complete row
of a parent, what else a world refuses or says) is the world's part (services/fork_parts.py).

Not built: forks of memory-stream runs (the stream's records up to N would have to be shared as
well: refused, as for chats) and any change a chat fork offers beyond the model and the seed
(`--edit`, `--llm-for`, `--variant`, `--speaker` are refused with the options a world takes).
A network's theory run (no model) forks with another seed only (worlds/network/services/
forking.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from simulator.domain.fork import StepPoint, repetition_seeds, say_seeds
from simulator.domain.llm_display import llm_name
from simulator.domain.world import domain_of
from simulator.errors import UserError
from simulator.services.experiments import ExperimentView
from simulator.services.fork_parts import (
    fork_notes,
    fork_part,
    fork_refusal,
    keeps_stream,
    range_note,
    spec_of,
    with_models,
)
from simulator.services.runs import choose_llm, experiment_snapshot, run_view
from simulator.store import lineage
from simulator.store.store import Store
from simulator.worlds import kind_of

WORLD_OPTIONS = "--llm, --repetitions and --seed"
FIRST_FORK = 1  # a fork at 0 would share nothing: a new run


@dataclass
class WorldBranch:
    """A world's fork, checked: one spec per repetition, and every choice explained."""

    kind: str
    view: ExperimentView
    point: StepPoint
    specs: list[BaseModel]
    notes: list[str] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)
    shared: int = 0  # rows before the fork point, read from the parent


def refuse_chat_options(
    doc: dict, kind: str, *, edit: object, llm_for: object, variants: object, speaker: object
) -> None:
    """A chat fork's options mean nothing in a grid or a network: refused, naming what a
    world's fork takes."""
    given = [
        name
        for name, value in (
            ("--edit", edit is not None),
            ("--llm-for", bool(llm_for)),
            ("--variant", bool(variants)),
            ("--speaker", speaker is not None),
        )
        if value
    ]
    if given:
        which = " and ".join(given)
        raise UserError(
            f"{which} {'has' if len(given) == 1 else 'have'} no meaning for {doc['_id']}, a "
            f"{kind} run (no messages to edit, no roles, variants or speakers): a {kind} fork "
            f"takes {WORLD_OPTIONS}",
            field=given[0],
            fix=f"leave {which} out; fork a chat conversation for those",
        )


def check_world_parent(doc: dict, kind: str, spec: BaseModel, llm: str | None) -> None:
    """Refuse, in a sentence, a run a fork cannot branch at a row as asked."""
    unit = domain_of(kind).ROW_UNIT
    if keeps_stream(kind, spec):
        raise UserError(
            f"{doc['_id']} keeps a memory stream, whose records a fork would have to share up "
            f"to the fork {unit}; forks of memory-stream runs are not built yet",
            fix=f"fork a {kind} run whose memory is summary or none",
        )
    refusal = fork_refusal(kind, doc, spec, llm)
    if refusal is not None:
        raise refusal


def shared_point(doc: dict, kind: str, spec: BaseModel, rows: list[dict], point: StepPoint) -> int:
    """How many of the parent's rows a fork at `point` shares; a UserError naming the range
    when the parent has no complete step (round) there."""
    unit = point.unit
    first, last = FIRST_FORK, fork_part(kind).last_complete(spec, rows)
    if not first <= point.n <= last:
        where = (
            f"it has no complete {unit} to fork at"
            if last < first
            else f"a fork of it starts at {unit} {first} to {last} (the {unit}s it stored)"
        )
        raise UserError(
            f"{doc['_id']} has no {unit} {point.n} to fork at: {where}{range_note(kind)}",
            field="--at",
            fix=f"give --at N with N the first {unit} the fork does not share "
            f"(`llm-sim conversation show {doc['_id']}` prints them)",
        )
    return sum(1 for r in rows if point.holds(r[unit]))


def _shares(point: StepPoint, rows: list[dict]) -> str:
    """'shares its 3 rows of step 1 (read from it, not copied)', or that it shares none."""
    unit = point.unit
    shared = [r[unit] for r in rows if point.holds(r[unit])]
    if not shared:
        return f"shares nothing (it starts at {unit} {point.n})"
    first, last = min(shared), point.n - 1
    which = f"{unit} {last}" if last == first else f"{unit}s {first} to {last}"
    rows_text = f"{len(shared)} row{'s' if len(shared) != 1 else ''}"
    return f"shares its {rows_text} of {which} (read from it, not copied)"


def branch(
    store: Store,
    doc: dict,
    at: str,
    *,
    llm: str | None = None,
    repetitions: int = 1,
    seed: int | None = None,
) -> WorldBranch:
    """Read and check a parent forked at a row (a grid's step, a network's round), the fork
    point and the changes; nothing is stored."""
    kind = kind_of(doc)
    spec = spec_of(kind, doc["spec"])
    check_world_parent(doc, kind, spec, llm)
    point = StepPoint.parse(at, str(domain_of(kind).ROW_UNIT))
    rows = lineage.full_rows(store, doc)
    shared = shared_point(doc, kind, spec, rows, point)
    experiment = domain_of(kind).from_stored(experiment_snapshot(store, doc))
    view = run_view(doc, experiment)
    notes = [f"fork of {doc['_id']} at {point}: {_shares(point, rows)}"]
    defaults: list[str] = []
    if llm:
        choice = choose_llm(experiment, llm, "--llm", defaults)  # type: ignore[arg-type]
        spec = with_models(kind, spec, lambda _: choice)
        notes.append(f"model from {point} on: {llm_name(choice)}")
    base = getattr(spec, "seed", None) if seed is None else seed
    say_seeds(seed, base, repetitions, notes, defaults)
    notes += fork_notes(kind, spec, point)
    specs = [
        spec.model_copy(update={"seed": s, "defaults_applied": list(defaults)})
        for s in repetition_seeds(base, repetitions)
    ]
    return WorldBranch(kind, view, point, specs, notes, defaults, shared)
