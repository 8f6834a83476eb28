"""A grid's runs (its part of services/runs.py: plan, stored document, models, run), shared by
`llm-sim run`, sweeps and the menus."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from simulator.domain.llm_display import llm_name
from simulator.domain.yaml_io import validation_to_user_error
from simulator.engine import events as ev
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.memory.services.blocks import embedder_for, resolve_memory
from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.services.runs import RunOutcome, choose_llm, experiment_snapshot, recorder_for
from simulator.store import lineage
from simulator.store.store import Store
from simulator.worlds.grid.domain.experiment import GridExperiment, GridSpec, GridWorld
from simulator.worlds.grid.domain.measures import resolved_measures
from simulator.worlds.grid.engine.run import GridRun, run_grid

WORLD_FLAGS = ("agents", "steps", "radius", "width", "height")


def build_spec(
    view: ExperimentView,
    *,
    llm: str | None = None,
    seed: int | None = None,
    world: dict | None = None,
) -> GridSpec:
    """The experiment's world with `world`'s values over it; every default that decides what
    runs is noted (and printed in the run header). A bad value is one UserError naming it."""
    experiment = view.experiment
    assert isinstance(experiment, GridExperiment)
    notes: list[str] = []
    choice = choose_llm(experiment, llm, "--llm", notes, seed)  # type: ignore[arg-type]
    if llm is None:
        notes.append(f"model: {llm_name(choice)} (not given; the experiment's first LLM)")
    overrides = {k: v for k, v in (world or {}).items() if v is not None}
    data = {**experiment.world.model_dump(mode="json"), **overrides}
    given = experiment.world.positions
    if given is not None and overrides.get("agents", len(given)) != len(given):
        raise UserError(
            f"the experiment places {len(given)} agents on given cells, "
            f"and {overrides['agents']} agents were asked for",
            field="--agents",
            fix="leave --agents out, or duplicate the experiment without positions",
        )
    try:
        world_model = GridWorld.model_validate(data)
    except ValidationError as exc:
        raise validation_to_user_error(exc, "grid world", source=None, marks={}) from None
    personas = experiment.personas
    if personas is not None and len(personas) != world_model.agents:
        raise UserError(
            f"the experiment gives {len(personas)} personas, and {world_model.agents} agents "
            "were asked for",
            field="--agents",
            fix="leave --agents out, or give one persona per agent",
        )
    if world_model.positions is None:
        drawn = "from the seed" if seed is not None else "with no seed: not reproducible"
        notes.append(f"positions: random cells {drawn}")
    if seed is None:
        notes.append("seed: none (positions and sampling are not reproducible)")
    start = world_model.starting_positions(seed)
    memory, memory_notes = resolve_memory(experiment.memory)
    if memory.kind == "none" and any(p.memories for p in personas or []):
        memory_notes.append("memory: none, so the personas' seed memories are never shown")
    probe = experiment.probe
    if probe is not None and probe.attendance is not None and memory.minutes_per_step is None:
        raise UserError(
            "probe.attendance gives the gathering's hours, and this run's memory block gives "
            "no minutes_per_step to place them on its steps",
            field="memory.minutes_per_step",
            fix="set memory.minutes_per_step (e.g. 60 for one simulated hour a step)",
        )
    return GridSpec(
        world=world_model,
        start=start,
        llm=choice,
        seed=seed,
        defaults_applied=notes + memory_notes,
        memory=memory,
        personas=personas,
        probe=probe,
        personality=experiment.personality,
        measures=resolved_measures(experiment.measures),  # what the run is analysed with
    )


def plan(
    view: ExperimentView,
    options: dict[str, Any],
    *,
    llm: str | None = None,
    seed: int | None = None,
) -> GridSpec:
    """A grid's spec from the run options: each a field of the experiment's world (`agents`
    a number), over the experiment's."""
    return build_spec(view, llm=llm, seed=seed, world=options)


def run_document(
    view: ExperimentView, spec: GridSpec, user: str, extra: dict | None = None
) -> dict:
    """The fields of a stored grid run (the store adds id, status, counters and times)."""
    agents = runs.agent_entries(spec.names, spec.llm, "")
    dumped = spec.model_dump(mode="json")
    return runs.document(view, dumped, agents, user, kind="grid", **(extra or {}))


async def run(
    store: Store,
    run_id: str,
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
    experiment: GridExperiment | None = None,
    on_call: Callable[[dict], None] | None = None,
    lease_owner: str | None = None,
    doc: dict | None = None,
    spec: GridSpec | None = None,
) -> RunOutcome:
    """Run or resume one stored grid run (a sweep passes its snapshot and claimed document, a
    new run its experiment and spec too); a fork continues from the rows it shares with its
    parent."""
    doc = doc or store.conversations.get(run_id)
    if experiment is None:
        experiment = GridExperiment.from_stored(experiment_snapshot(store, doc))
    # a fork reads the rows before its fork point from its parent (store/lineage.py)
    recorder = recorder_for(store, doc, on_call, lease_owner, lineage.world_prefix(store, doc))
    if spec is None:
        spec = GridSpec.model_validate(doc["spec"])
    grid_run = GridRun(
        run_id=run_id,
        spec=spec,
        llms=llms,
        recorder=recorder,
        on_event=on_event,
        stop=stop or asyncio.Event(),
        embedder=embedder_for(spec.memory),
        experiment=experiment,
    )
    status = await run_grid(grid_run)
    return RunOutcome(run_id, status, recorder.error, dict(recorder.counters))
