"""The market's runs (simulator/services/run_parts.py): plan, stored document, models, run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from market_world.domain.kind import KIND, Experiment, MarketSettings, Spec
from market_world.engine.run import run_market
from simulator.domain.yaml_io import validation_to_user_error
from simulator.engine import events as ev
from simulator.engine.step_loop import StepRun
from simulator.llm.access import LLMAccess
from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.services.runs import RunOutcome, choose_llm, recorder_for
from simulator.store import lineage
from simulator.store.store import Store


def plan(
    view: ExperimentView,
    options: dict[str, Any],
    *,
    llm: str | None = None,
    seed: int | None = None,
) -> Spec:
    """The experiment's market settings with `options` (settings by name) over them."""
    experiment = view.experiment
    assert isinstance(experiment, Experiment)
    notes: list[str] = []
    choice = choose_llm(experiment, llm, "--llm", notes, seed)  # type: ignore[arg-type]
    if llm is None:
        notes.append(f"model: {choice.key} (not given; the experiment's first LLM)")
    if seed is None:
        notes.append("seed: none (sampling is not reproducible)")
    given = {k: v for k, v in options.items() if v is not None}
    try:
        settings = MarketSettings.model_validate({**experiment.market.model_dump(), **given})
    except ValidationError as exc:
        raise validation_to_user_error(exc, "market", source=None, marks={}) from None
    return Spec(settings=settings, llm=choice, seed=seed, defaults_applied=notes)


def run_document(view: ExperimentView, spec: Spec, user: str, extra: dict | None = None) -> dict:
    agents = runs.agent_entries(spec.names, spec.llm, "none")
    dumped = spec.model_dump(mode="json")
    return runs.document(view, dumped, agents, user, kind=KIND, **(extra or {}))


async def run(
    store: Store,
    run_id: str,
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
    on_call: Callable[[dict], None] | None = None,
    lease_owner: str | None = None,
    doc: dict | None = None,
    experiment: Experiment | None = None,
    spec: Spec | None = None,
) -> RunOutcome:
    """Run or resume one stored market run (a fork reads its shared rows from its parent)."""
    doc = doc or store.conversations.get(run_id)
    recorder = recorder_for(store, doc, on_call, lease_owner, lineage.world_prefix(store, doc))
    spec = spec or Spec.model_validate(doc["spec"])
    step_run = StepRun(run_id, recorder, on_event, stop or asyncio.Event())
    status = await run_market(step_run, spec, llms)
    return RunOutcome(run_id, status, recorder.error, dict(recorder.counters))
