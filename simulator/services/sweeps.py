"""Sweep operations: plan, create (idempotent), status, retry; shared by commands and menus."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from simulator.domain.clock import now
from simulator.domain.ids import content_hash, id_run, new_ids
from simulator.domain.sweep_names import SweepError
from simulator.domain.yaml_io import validation_to_user_error
from simulator.errors import PermissionRefused, UserError
from simulator.services.experiments import ExperimentView
from simulator.services.sweep_status import status as status
from simulator.store.counting import is_server_collection
from simulator.store.derived_docs import Derived
from simulator.store.page_sizes import short_pages
from simulator.store.store import Store
from simulator.worlds.chat.domain.sweep import (
    Cell,
    PlannedConversation,
    SweepSpec,
    calls_per_conversation,
    expand,
)
from simulator.worlds.chat.domain.sweep_design import describe
from simulator.worlds.chat.services.sweep_documents import (
    CellParts,
    cache_key,
    cell_defaults,
    cell_parts,
    cell_seed_note,
    conversation_document,
    conversation_spec,
)

M = TypeVar("M", bound=BaseModel)


@dataclass
class Plan:
    cells: int
    conversations: int
    expected_calls: int
    already_stored: int
    sample: Cell
    planned: list[PlannedConversation]
    defaults_applied: list[str]
    breakdown: str = ""  # how the cells came about, factor by factor
    stored_keys: frozenset[str] = frozenset()  # planned keys already stored when planned
    calls_at_least: bool = False  # some runs make calls no plan can count (a memory stream's)
    fork: dict | None = None  # a fork sweep's parent, point and edit (services/fork_sweeps.py)
    switches: dict[str, str] | None = None  # the chat switches every conversation runs with

    def as_dict(self) -> dict:
        fork = {} if self.fork is None else {"fork": self.fork}
        switches = {} if self.switches is None else {"switches": self.switches}
        return {
            "breakdown": self.breakdown,
            "cells": self.cells,
            "conversations": self.conversations,
            "expected_calls": self.expected_calls,
            "expected_calls_at_least": self.calls_at_least,
            "already_stored": self.already_stored,
            "sample_cell": self.sample.as_dict(),
            "sample_label": self.sample.label(),
            "defaults_applied": self.defaults_applied,
            **switches,
            **fork,
        }


def validate_sweep(model: type[M], data: dict, source: str | None = None) -> M:
    """A world's sweep model from a sweep file's mapping (the flags over it); a UserError
    naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_to_user_error(exc, "sweep", source=source, marks={}) from None


def validate_spec(data: dict, source: str | None = None) -> SweepSpec:
    return validate_sweep(SweepSpec, data, source)


def expanded(
    view: ExperimentView, spec: SweepSpec, owner: str
) -> tuple[list[PlannedConversation], str]:
    """Every planned conversation and the plan's breakdown; a UserError naming the field."""
    try:
        planned = expand(spec, view.experiment, view.version, owner)
        breakdown = describe(spec, view.experiment)
    except SweepError as exc:
        raise UserError(exc.message, field=exc.field, fix=exc.fix) from None
    except (ValueError, KeyError) as exc:
        raise UserError(
            str(exc.args[0]), field="sweep", fix="adjust the sweep file or flags"
        ) from None
    if not planned:
        raise UserError(
            "the sweep has no conversation to run",
            field="sweep",
            fix="check days against total_messages and the variant lists",
        )
    return planned, breakdown


def plan(store: Store, view: ExperimentView, spec: SweepSpec, owner: str) -> Plan:
    """What the sweep will run, without writing anything. Conversations are keyed per owner:
    a researcher's sweep reuses only their own identical conversations."""
    planned, breakdown = expanded(view, spec, owner)
    firsts: dict[str, PlannedConversation] = {}  # each cell's first conversation
    sizes: dict[str, int] = {}  # conversations per cell
    for p in planned:
        if p.cell_key not in firsts:
            firsts[p.cell_key] = p
            sizes[p.cell_key] = 0
        sizes[p.cell_key] += 1
    cell_keys = {key: p.cell for key, p in firsts.items()}
    shapes: dict[str, PlannedConversation] = {}  # what ConversationSpec checks; not variants
    for p in firsts.values():
        shape = {**p.cell.as_dict(), "variant": None}
        shapes.setdefault(content_hash(shape, 16), p)
    for first in shapes.values():
        conversation_spec(view, spec, first)  # every cell can run before anything is stored
    calls = sum(
        calls_per_conversation(firsts[key].cell, spec.total_messages, spec.message_counting) * n
        for key, n in sizes.items()
    )
    # in key order: each batch of lookups then reads neighbouring pages of the store's key
    # index (into a store of a million, random order read a page per key)
    stored = frozenset(store.sweeps.existing_keys(sorted(p.key for p in planned)))
    notes: dict[str, None] = {}
    for cell in cell_keys.values():
        if spec.seed is None:  # what the cell's LLMs make of no seed (their own, or none)
            notes[cell_seed_note(view, cell)] = None
        notes.update(dict.fromkeys(cell_defaults(view, cell, spec.seed)))
    return Plan(
        len(cell_keys),
        len(planned),
        calls,
        len(stored),
        planned[0].cell,
        planned,
        list(notes),
        breakdown,
        stored,
        calls_at_least=view.experiment.memory.is_stream,  # a stream's ratings and reflections
        switches=spec.switches,
    )


def sweep_key(view: ExperimentView, spec: SweepSpec, owner: str) -> str:
    """The same owner, experiment version and spec give the same sweep (re-creating is a no-op);
    another researcher's identical sweep is their own."""
    return "s_" + content_hash({"v": view.version, "spec": spec.identity(), "owner": owner}, 20)


def create(
    store: Store,
    view: ExperimentView,
    spec: SweepSpec,
    user: str,
    prepared: Plan | None = None,
    *,
    parts: Callable[[ExperimentView, SweepSpec, PlannedConversation], CellParts] = cell_parts,
    extra: Callable[[str, PlannedConversation], dict] | None = None,
) -> tuple[dict, int]:
    """Create the sweep (or find the identical one) and store every conversation not yet stored.

    `prepared`: this sweep's plan when the caller has just made it (it is not made twice; keys
    stored since are still skipped). Every cell's parts are built before anything is written,
    so a cell that cannot be built leaves no sweep behind; the conversations are built one at a
    time as the store takes them (store/bulk_insert.py: on the embedded store all or none).
    A fork sweep builds its cells' parts itself (`parts`) and adds each branch's fork fields
    (`extra(sweep_id, planned)`)."""
    the_plan = prepared if prepared is not None else plan(store, view, spec, user)
    per_cell: dict[str, CellParts] = {}
    seen: set[tuple[str, bool]] = set()
    for p in the_plan.planned:
        if (p.cell_key, p.seed is None) not in seen:
            seen.add((p.cell_key, p.seed is None))
            per_cell.setdefault(cache_key(p), parts(view, spec, p))
    key = sweep_key(view, spec, user)
    existing = store.sweeps.find_by_key(key)
    sweep = (
        existing
        if existing
        else store.sweeps.create(
            {
                "key": key,
                "experiment_id": view.id,
                "experiment_version": view.version,
                "owner": user,
                "name": spec.name,
                "spec": spec.model_dump(mode="json"),
                "experiment": view.experiment.model_dump(mode="json"),
                "plan": the_plan.as_dict(),
            }
        )
    )
    store.users.ensure(user)
    stored = the_plan.stored_keys

    templates: dict[str, tuple[dict, dict]] = {}
    clock = _Clock()
    # one run of consecutive ids (domain/ids.py id_run), then random ones if more are asked for
    to_add = len(the_plan.planned) - len(stored)
    conversation_ids = itertools.chain(id_run("conv", to_add), new_ids("conv"))

    def document(order: int, p: PlannedConversation) -> dict:
        """What conversation_document gives, from a template made once per cell: only the
        fields that differ per conversation are filled in (the shared parts are not copied:
        each document is encoded and dropped as the store takes it)."""
        cache = cache_key(p)
        if cache not in templates:
            first = conversation_document(view, spec, sweep["_id"], p, order, user, per_cell)
            templates[cache] = (first, first["spec"])
        template, conv_spec = templates[cache]
        varying = {
            "_id": next(conversation_ids),
            "key": p.key,
            "created_at": clock.now(),
            "order": order,
            "repetition": p.repetition,
            "spec": Derived(conv_spec, {"seed": p.seed}),
        }
        if extra is not None:  # a fork's branch fields
            varying.update(extra(sweep["_id"], p))
        return Derived(template, varying)  # store/derived_docs.py: the template encoded once

    docs = (document(order, p) for order, p in enumerate(the_plan.planned) if p.key not in stored)
    added = store.sweeps.insert_conversations(docs)
    return sweep, added


class _Clock:
    """`now()` for documents made many to a millisecond: read once per millisecond (it takes
    7 µs, a million conversations 7 s), the same value `now()` gives within it."""

    def __init__(self) -> None:
        self._ms = -1
        self._now = now()

    def now(self) -> datetime:
        ms = time.time_ns() // 1_000_000
        if ms != self._ms:
            self._ms, self._now = ms, now()
        return self._now


def require_owner(store: Store, sweep_id: str, user: str, action: str) -> dict:
    """Running, resuming, joining or retrying a sweep is its owner's: the conversations it runs
    are the owner's, written with their models and keys. Others may read, export and score it."""
    sweep = store.sweeps.get(sweep_id)
    owner = sweep.get("owner")
    if owner != user:
        raise PermissionRefused(
            f"sweep {sweep_id} belongs to {owner!r}; only its owner may {action} it "
            f"(you are {user!r})",
            fix=f"ask {owner} to {action} it, or create your own sweep of experiment "
            f"{sweep['experiment_id']} with 'llm-sim sweep create {sweep['experiment_id']}'",
        )
    return sweep


def apply_overrides(spec: SweepSpec, overrides: dict) -> SweepSpec:
    data = spec.model_dump(mode="json")
    data.update({k: v for k, v in overrides.items() if v not in (None, (), [])})
    return validate_spec(data)


def parse_variant_flags(values: Iterable[str]) -> dict[str, list[str] | str]:
    """`--variant "Guard/Personality=respectful,abusive"` or `=all`."""
    result: dict[str, list[str] | str] = {}
    for value in values:
        slot, sep, names = value.partition("=")
        if not sep or not names.strip():
            raise UserError(
                f"{value!r} is not SECTION=NAME[,NAME…]",
                field="--variant",
                fix="write e.g. --variant 'Guard/Personality=respectful,abusive' or =all",
            )
        cleaned = names.strip()
        result[slot.strip()] = (
            "all" if cleaned == "all" else [n.strip() for n in cleaned.split(",") if n.strip()]
        )
    return result


EMBEDDED_COMFORT = 20_000  # conversations; beyond this export and measures take minutes there


def embedded_scale_note(store: Store, conversations: int) -> str | None:
    """A note when a large sweep goes into the embedded store, whose export and measures read
    every conversation (bench/store_scale.py); None when it will be comfortable."""
    if conversations < EMBEDDED_COMFORT or is_server_collection(store.db.conversations):
        return None
    note = (
        f"note: this sweep has {conversations:,} conversations and the database is the embedded "
        "store. Its sweep status, conversation list and claims answer from indexes at any size, "
        "but export and measures read every conversation: 2 to 7 minutes at 100,000 (on 2 "
        "CPUs). For sweeps this size a MongoDB server is faster for those: "
        "--db mongodb://HOST:27017 (or SIM_DB)."
    )
    pages = short_pages(store.db.conversations)
    if pages is not None:
        note += (
            f" This store keeps its conversations in {pages // 1024} KB pages (it was made by an"
            " earlier version), which makes creating large sweeps slower: the Storage page of"
            " the documentation shows how to give it 16 KB pages."
        )
    return note
