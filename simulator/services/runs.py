"""Runs of any world: plan, store, check the models, run and resume.

`llm-sim run`, the menus and the tests use these; what differs between worlds (the spec, the
stored document's world fields, the models to check, the step loop) comes from the world's
`services.runs` part (services/run_parts.py). Also here: what every world's run shares (the
outcome, the LLM choice, the experiment snapshot, the recorder).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.sweep_names import resolve_llm
from simulator.domain.world import domain_of
from simulator.engine import events as ev
from simulator.engine.recorder import StoreRecorder
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.base import FatalBackendError
from simulator.services.conversation_listing import FAVOURITE_KIND
from simulator.services.experiments import ExperimentView
from simulator.services.run_parts import run_part
from simulator.store import lineage
from simulator.store.lineage import Prefix
from simulator.store.store import Store
from simulator.worlds import kind_of


class WithLLMs(Protocol):
    """Any world's experiment: each lists the LLMs its runs may use."""

    llms: list[LLMChoice]


@dataclass
class RunOutcome:
    conversation_id: str
    status: str
    error: str | None
    counters: dict


def plan(
    view: ExperimentView,
    options: dict[str, Any] | None = None,
    *,
    llm: str | None = None,
    seed: int | None = None,
) -> BaseModel:
    """The spec of one run of the experiment, the world's `options` over its settings."""
    return run_part(view.kind).plan(view, dict(options or {}), llm=llm, seed=seed)


def run_document(
    view: ExperimentView, spec: BaseModel, user: str, extra: dict | None = None
) -> dict:
    """The fields of a stored run of the experiment's world (see `document`)."""
    return run_part(view.kind).run_document(view, spec, user, extra)


def document(
    view: ExperimentView, spec: dict, agents: list[dict], user: str, **fields: Any
) -> dict:
    """The fields every stored run has: the experiment's id and version, its owner, the spec
    whole, a snapshot of the experiment and one entry per agent; then the world's `fields`
    (its `kind`, a day split, a sweep's or a fork's fields)."""
    return {
        "experiment_id": view.id,
        "experiment_version": view.version,
        "owner": user,
        "spec": spec,
        "experiment": view.experiment.model_dump(mode="json"),
        "agents": agents,
        **fields,
    }


def agent_entries(names: list[str], choice: LLMChoice | None, no_model: str) -> list[dict]:
    """One entry per agent of a run whose agents share one model (`no_model`, e.g. "theory",
    names the model of a run that calls none)."""
    return [
        {
            "name": name,
            "index": i,
            "model": choice.model if choice else no_model,
            "llm_label": choice.key if choice else no_model,
        }
        for i, name in enumerate(names)
    ]


def create(store: Store, document: dict, user: str) -> dict:
    """Store a pending run document for `user`; the stored document (with its id), to hand on
    to `run`."""
    store.users.ensure(user)
    return store.conversations.create(document)


def models(kind: str, spec: BaseModel) -> list[LLMChoice]:
    """Every model a run of `kind` with `spec` calls: the world's `models` where it has more
    than one, else the spec's one `llm` (none: a run without a model, e.g. a theory's)."""
    world = run_part(kind)
    if hasattr(world, "models"):
        return world.models(spec)
    llm = getattr(spec, "llm", None)
    return [] if llm is None else [llm]


async def preflight(kind: str, spec: BaseModel, llms: LLMAccess) -> None:
    """Check the run's models before anything is written; a failure is a UserError (exit 2).
    A run that calls no model checks nothing."""
    choices = models(kind, spec)
    if not choices:
        return
    try:
        await llms.preflight(choices)
    except FatalBackendError as exc:
        raise UserError(str(exc)) from None


async def start(
    store: Store,
    view: ExperimentView,
    spec: BaseModel,
    user: str,
    llms: LLMAccess,
    *,
    on_created: Callable[[dict], None] = lambda doc: None,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
    **world: Any,
) -> RunOutcome:
    """Check the models, store the pending run (`on_created` hears of it), run it: the stored
    document, the experiment and the spec are handed on, not read back. `world` holds the
    world's own run keywords (a chat's manual speaker input)."""
    kind = view.kind
    await preflight(kind, spec, llms)
    doc = create(store, run_document(view, spec, user), user)
    on_created(doc)
    part = run_part(kind)
    return await part.run(
        store,
        doc["_id"],
        llms,
        on_event,
        stop,
        experiment=view.experiment,
        spec=spec,
        doc=doc,
        **world,
    )


def create_run(
    store: Store, view: ExperimentView, spec: BaseModel, user: str, extra: dict | None = None
) -> dict:
    """Store a pending run of `spec` (its world's run document, with `extra` fields)."""
    return create(store, run_document(view, spec, user, extra), user)


async def run(
    store: Store,
    run_id: str,
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
    *,
    doc: dict | None = None,
    **world: Any,
) -> RunOutcome:
    """Run or resume one stored run of any world (`doc`: the stored document, when the caller
    holds it; `world`: the world's own keywords, e.g. a sweep's experiment and lease)."""
    doc = doc or store.conversations.get(run_id)
    return await run_part(kind_of(doc)).run(store, run_id, llms, on_event, stop, doc=doc, **world)


async def resume(
    store: Store,
    run_id: str,
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
) -> RunOutcome:
    """Finish a stopped run: it continues after its last stored step and answers its finished
    calls from the ledger."""
    return await run(store, run_id, llms, on_event, stop)


def transcript(store: Store, run_id: str) -> dict:
    """The run document and what it stored, for display or --json: the world's `stored_rows`
    when it has them (a chat's messages and summaries), else its rows under its unit's plural
    ("steps", "rounds"); a fork's shared ones first (each says the run that stored it)."""
    doc = store.conversations.get(run_id)
    if "experiment" not in doc and doc.get("sweep_id"):
        doc["experiment"] = store.sweeps.get(doc["sweep_id"])["experiment"]
    kind = kind_of(doc)
    stored_rows = getattr(run_part(kind), "stored_rows", None)
    if stored_rows is not None:
        return {"conversation": doc, **stored_rows(store, doc)}
    return {"conversation": doc, f"{domain_of(kind).RUN_UNIT}s": lineage.full_rows(store, doc)}


def choose_llm(
    experiment: WithLLMs,
    model: str | None,
    field: str,
    notes: list[str] | None = None,
    run_seed: int | None = None,
) -> LLMChoice:
    """A model string to an LLM choice: the experiment's own (with its parameters) if listed,
    else the model with the experiment's default sampling, noted in `notes` (without the
    default's seed when the run has its own `run_seed`, which replaces it)."""
    if model is None:
        return experiment.llms[0]
    _refuse_ambiguous(experiment, model, field)
    try:
        choice, note = resolve_llm(experiment, model, run_seed)
    except ValidationError as exc:
        raise UserError(
            exc.errors()[0]["msg"].removeprefix("Value error, "),
            field=field,
            fix="use a model string such as local:smollm2 or ollama:llama3",
        ) from None
    if note and notes is not None and note not in notes:
        notes.append(note)
    return choice


def _refuse_ambiguous(experiment: WithLLMs, model: str, field: str) -> None:
    """A model string listed under several labels could mean any of them: ask for the label."""
    model = model.strip()
    if any(c.key == model for c in experiment.llms):
        return
    labels = [c.key for c in experiment.llms if c.model == model]
    if len(labels) > 1:
        raise UserError(
            f"{model} is listed {len(labels)} times in the experiment, as "
            f"{', '.join(labels)}, each with its own sampling parameters",
            field=field,
            fix=f"name the entry by its label, e.g. {field} {labels[0]}",
        )


def experiment_snapshot(store: Store, doc: dict) -> dict:
    """The experiment a stored run was created from: on the run, or on its sweep."""
    return doc.get("experiment") or store.sweeps.get(doc["sweep_id"])["experiment"]


def run_view(doc: dict, experiment: object) -> ExperimentView:
    """The experiment a stored run ran with, as services take one: its snapshot (`experiment`,
    see `experiment_snapshot`), id, owner and version (a replay or a fork keeps all four)."""
    return ExperimentView(
        id=doc.get("experiment_id", ""),
        owner=doc.get("owner", ""),
        experiment=experiment,  # type: ignore[arg-type]
        created_at=None,
        updated_at=None,
        duplicated_from=None,
        version=doc.get("experiment_version", ""),
    )


def recorder_for(
    store: Store,
    doc: dict,
    on_call: Callable[[dict], None] | None,
    lease_owner: str | None,
    shared: Prefix | None = None,
) -> StoreRecorder:
    """The recorder of a stored run: a run never started has nothing of its own to read back;
    a fork reads what it shares from its parent (`shared`)."""
    return StoreRecorder(
        store,
        doc["_id"],
        on_call=on_call,
        lease_owner=lease_owner,
        never_started=doc.get("started_at") is None,
        shared=shared,
    )


def prompts(store: Store, run_id: str) -> list[dict]:
    """Every call of the run with the exact messages it sent, in order (an embedding request's
    messages are the texts it sent; the vectors a row keeps for a resume are left out)."""
    store.conversations.get(run_id)
    rows = []
    for call in store.calls.for_conversation(run_id):
        call.pop("vectors", None)
        rows.append({**call, "messages": store.calls.prompt(call["prompt_hash"])})
    return rows


def set_favourite(store: Store, run_id: str, user: str, favourite: bool) -> None:
    store.conversations.get(run_id)
    store.users.ensure(user)
    store.users.set_favourite(user, FAVOURITE_KIND, run_id, favourite)
