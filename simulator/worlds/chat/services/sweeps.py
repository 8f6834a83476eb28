"""Sweeps of group chats (services/sweep_parts.py): the factorial design of services/sweeps.py
(cells of models, agents, days, speaker methods and variants), or, with a `fork:` block, the
branches of one stored chat (services/fork_sweeps.py)."""

from __future__ import annotations

from functools import partial

from simulator.services import sweeps as factorial
from simulator.services.experiments import ExperimentView
from simulator.services.sweep_parts import RunStored
from simulator.services.sweeps import Plan
from simulator.store.store import Store
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.sweep import SweepSpec
from simulator.worlds.chat.services import fork_sweeps
from simulator.worlds.chat.services import runs as conversations

Spec = SweepSpec
validate_spec = factorial.validate_spec


def _design(spec: SweepSpec):
    return fork_sweeps if spec.fork is not None else factorial


def plan(store: Store, view: ExperimentView, spec: SweepSpec, owner: str) -> Plan:
    return _design(spec).plan(store, view, spec, owner)


def create(
    store: Store, view: ExperimentView, spec: SweepSpec, user: str, prepared: Plan | None = None
) -> tuple[dict, int]:
    return _design(spec).create(store, view, spec, user, prepared)


def runner(snapshot: dict) -> RunStored:
    return partial(conversations.run, experiment=Experiment.from_stored(snapshot))
