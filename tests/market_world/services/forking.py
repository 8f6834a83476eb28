"""The market's replays and forks (simulator/services/fork_parts.py): it forks at a round; its
one model is the spec's `llm` (the house's default)."""

from __future__ import annotations

from market_world.domain.kind import Spec
from market_world.engine.run import last_offers
from market_world.services import runs as market_runs
from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.store.store import Store

run = market_runs.run


def create(store: Store, view: ExperimentView, spec: Spec, user: str, extra: dict) -> dict:
    return runs.create(store, market_runs.run_document(view, spec, user, extra), user)


def last_complete(spec: Spec, rows: list[dict]) -> int:
    return last_offers(spec, rows)[0]
