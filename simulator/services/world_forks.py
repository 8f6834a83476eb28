"""`conversation fork` of a grid run or a network run: branch it at a step (a round) and continue
it under another model or seed, once per repetition.

A world's fork is a run of the parent's kind (`fork_of`, `fork_at` {step: N} or {round: N})
whose spec is the parent's with the model and seed changed: same world, start cells, personas,
graph snapshots, agents table and scenario. It stores only the steps (rounds) from N on; the
rows before N are read from the parent (store/lineage.py `world_prefix`), and the engine resumes
from them exactly as a run killed after step N-1 resumes from its own (`resume_state`,
`stored_history`), so a fork with the parent's model and seed sends the parent's prompts with
the parent's per-call seeds (they derive from where each call sits).

Not built: forks of memory-stream runs (the stream's records up to N would have to be shared as
well: refused, as for chats) and any change a chat fork offers beyond the model and the seed
(`--edit`, `--llm-for`, `--variant`, `--speaker` are refused with the options a world takes).
A theory run (no model) forks with another seed only: it continues from the state stored at
round N-1 with its own draws (engine/theory_run.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from simulator.domain.fork import WORLD_UNITS, StepPoint, repetition_seeds
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.store import lineage
from simulator.store.store import Store
from simulator.worlds.chat.engine.run import llm_name
from simulator.worlds.chat.services.runs import choose_llm, experiment_snapshot, run_view
from simulator.worlds.grid.domain.experiment import GridExperiment, GridSpec
from simulator.worlds.grid.engine.run import resume_state
from simulator.worlds.grid.services import runs as grid_runs
from simulator.worlds.network.domain.experiment import NetworkExperiment, NetworkSpec
from simulator.worlds.network.engine.run import stored_history
from simulator.worlds.network.services import runs as network_runs

WORLD_OPTIONS = "--llm, --repetitions and --seed"
MODELS = {"grid": (GridExperiment, GridSpec), "network": (NetworkExperiment, NetworkSpec)}


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
    """Refuse, in a sentence, a grid or network run a fork cannot branch as asked."""
    unit = WORLD_UNITS[kind]
    theory = isinstance(spec, NetworkSpec) and spec.is_theory
    if spec.memory.is_stream and not theory:  # type: ignore[attr-defined]
        raise UserError(
            f"{doc['_id']} keeps a memory stream, whose records a fork would have to share up "
            f"to the fork {unit}; forks of memory-stream runs are not built yet",
            fix=f"fork a {kind} run whose memory is summary or none",
        )
    if theory and llm:
        raise UserError(
            f"{doc['_id']} is a theory run, which has no model to change",
            field="--llm",
            fix="leave --llm out (a theory fork changes the seed), or fork an LLM run",
        )


def shared_point(doc: dict, kind: str, spec: BaseModel, rows: list[dict], point: StepPoint) -> int:
    """How many of the parent's rows a fork at `point` shares; a UserError naming the range
    when the parent has no complete step (round) there."""
    unit = WORLD_UNITS[kind]
    if isinstance(spec, GridSpec):
        state, _ = resume_state(spec, rows)
        first, last = 1, state.step  # steps count from 1; before step 1 is the start
    else:
        assert isinstance(spec, NetworkSpec)
        history, _ = stored_history(spec, rows)
        first, last = 1, len(history) - 1  # round 0 is the agents table's: no model's work
    if not first <= point.n <= last:
        where = (
            f"it has no complete {unit} to fork at"
            if last < first
            else f"a fork of it starts at {unit} {first} to {last} (the {unit}s it stored)"
        )
        before = " (round 0 is the agents table's answers)" if kind == "network" else ""
        raise UserError(
            f"{doc['_id']} has no {unit} {point.n} to fork at: {where}{before}",
            field="--at",
            fix=f"give --at N with N the first {unit} the fork does not share "
            f"(`llm-sim conversation show {doc['_id']}` prints them)",
        )
    return sum(1 for r in rows if point.holds(r[unit]))


def _shares(kind: str, point: StepPoint, shared: int) -> str:
    """'shares its 3 rows of step 1 (read from it, not copied)', or that it shares none."""
    unit, first = point.unit, 0 if kind == "network" else 1
    if shared == 0:
        return f"shares nothing (it starts at {unit} {first})"
    last = point.n - 1
    which = f"{unit} {last}" if last == first else f"{unit}s {first} to {last}"
    return (
        f"shares its {shared} row{'s' if shared != 1 else ''} of {which} (read from it, not copied)"
    )


def branch(
    store: Store,
    doc: dict,
    at: str,
    *,
    llm: str | None = None,
    repetitions: int = 1,
    seed: int | None = None,
) -> WorldBranch:
    """Read and check a grid or network parent, the fork point and the changes; nothing is
    stored."""
    kind = doc["kind"]
    experiment_model, spec_model = MODELS[kind]
    spec = spec_model.model_validate(doc["spec"])
    check_world_parent(doc, kind, spec, llm)
    unit = WORLD_UNITS[kind]
    point = StepPoint.parse(at, unit)
    rows = lineage.full_rows(store, doc)
    shared = shared_point(doc, kind, spec, rows, point)
    experiment = experiment_model.from_stored(experiment_snapshot(store, doc))
    view = run_view(doc, experiment)
    notes = [f"fork of {doc['_id']} at {point}: {_shares(kind, point, shared)}"]
    defaults: list[str] = []
    update: dict = {}
    if llm:
        choice = choose_llm(experiment, llm, "--llm", defaults)  # type: ignore[arg-type]
        update["llm"] = choice
        notes.append(f"model from {point} on: {llm_name(choice)}")
    base = getattr(spec, "seed", None) if seed is None else seed
    theory = isinstance(spec, NetworkSpec) and spec.is_theory
    if seed is None and base is not None:
        defaults.append(f"seed: {base} (not given; the parent's), then +1 per repetition")
    elif base is None:
        defaults.append("seed: none (the parent had none; continuations are not reproducible)")
    elif repetitions > 1:
        notes.append(f"seeds {base} to {base + repetitions - 1}, one per repetition")
    if theory:
        notes.append(
            f"theory: continues from the state stored at round {point.n - 1} with its own "
            "draws from its seed (the parent's seed draws other updates from there, since the "
            "theory draws a whole run's updates at once)"
        )
    specs = [
        spec.model_copy(update={**update, "seed": s, "defaults_applied": list(defaults)})
        for s in repetition_seeds(base, repetitions)
    ]
    return WorldBranch(kind, view, point, specs, notes, defaults, shared)


def create_run(
    store: Store, kind: str, view: ExperimentView, spec: BaseModel, user: str, extra: dict
) -> dict:
    """Store one pending grid or network run with the fork's fields."""
    if kind == "grid":
        assert isinstance(spec, GridSpec)
        document = grid_runs.run_document(view, spec, user, extra)
    else:
        assert isinstance(spec, NetworkSpec)
        document = network_runs.run_document(view, spec, user, extra)
    return runs.create(store, document, user)


async def preflight(kind: str, spec: BaseModel, llms: LLMAccess) -> None:
    if kind == "grid":
        assert isinstance(spec, GridSpec)
        await grid_runs.preflight(spec, llms)
    else:
        assert isinstance(spec, NetworkSpec)
        await network_runs.preflight(spec, llms)
