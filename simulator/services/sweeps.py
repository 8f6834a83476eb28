"""Sweep operations: plan, create (idempotent), status, retry; shared by commands and menus."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import ValidationError

from simulator.domain.conversation import ConversationSpec
from simulator.domain.ids import content_hash
from simulator.domain.sweep import (
    Cell,
    PlannedConversation,
    SweepSpec,
    calls_per_conversation,
    expand,
)
from simulator.domain.sweep_design import describe
from simulator.domain.sweep_names import SweepError, resolve_llm, to_llm_choice
from simulator.domain.yaml_io import validation_to_user_error
from simulator.engine.agents import build_agents
from simulator.errors import PermissionRefused, UserError
from simulator.services.experiments import ExperimentView
from simulator.store.counting import is_server_collection
from simulator.store.repositories.conversations import ConversationsRepository
from simulator.store.store import Store


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

    def as_dict(self) -> dict:
        return {
            "breakdown": self.breakdown,
            "cells": self.cells,
            "conversations": self.conversations,
            "expected_calls": self.expected_calls,
            "already_stored": self.already_stored,
            "sample_cell": self.sample.as_dict(),
            "sample_label": self.sample.label(),
            "defaults_applied": self.defaults_applied,
        }


def validate_spec(data: dict, source: str | None = None) -> SweepSpec:
    try:
        return SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise validation_to_user_error(exc, "sweep", source=source, marks={}) from None


def plan(store: Store, view: ExperimentView, spec: SweepSpec, owner: str) -> Plan:
    """What the sweep will run, without writing anything. Conversations are keyed per owner:
    a researcher's sweep reuses only their own identical conversations."""
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
    cell_keys = {p.cell_key: p.cell for p in planned}
    firsts: dict[str, PlannedConversation] = {}  # each cell's first conversation
    for p in planned:
        firsts.setdefault(p.cell_key, p)
    shapes: dict[str, PlannedConversation] = {}  # what ConversationSpec checks; not variants
    for p in firsts.values():
        shape = {**p.cell.as_dict(), "variant": None}
        shapes.setdefault(content_hash(shape, 16), p)
    for first in shapes.values():
        _conversation_spec(view, spec, first)  # every cell can run before anything is stored
    calls = sum(
        calls_per_conversation(p.cell, spec.total_messages, spec.message_counting) for p in planned
    )
    stored = frozenset(store.sweeps.existing_keys([p.key for p in planned]))
    notes: dict[str, None] = {}
    if spec.seed is None:
        notes["seed: none (speaker choice and sampling are not reproducible)"] = None
    for cell in cell_keys.values():
        notes.update(dict.fromkeys(cell_defaults(view, cell)))
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
    )


def cell_defaults(view: ExperimentView, cell: Cell) -> list[str]:
    """Sentences for every value of a cell the tool chose because the sweep did not say."""
    experiment = view.experiment
    notes = []
    for model in dict.fromkeys(
        [*cell.role_llms.values(), *(m for m in (cell.manager_llm, cell.summarizer_llm) if m)]
    ):
        note = resolve_llm(experiment, model)[1]
        if note:
            notes.append(note)
    first_role = experiment.roles[0].name
    whose = (
        "the agents' model"
        if len(set(cell.role_llms.values())) == 1
        else f"the model of the first role, {first_role}"
    )
    if cell.speaker_method == "auto" and cell.manager_defaulted:
        notes.append(f"manager_llm: {cell.manager_llm} (not given; {whose})")
    if cell.summarizer_llm is None:
        notes.append(f"summarizer_llm: {cell.role_llms[first_role]} (not given; {whose})")
    return notes


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
) -> tuple[dict, int]:
    """Create the sweep (or find the identical one) and store every conversation not yet stored.

    `prepared`: this sweep's plan when the caller has just made it (it is not made twice; keys
    stored since are still skipped). Every cell's parts are built before anything is written,
    so a cell that cannot be built leaves no sweep behind; the conversations are built one at a
    time as the store takes them (store/bulk_insert.py: on the embedded store all or none)."""
    the_plan = prepared if prepared is not None else plan(store, view, spec, user)
    per_cell: dict[str, CellParts] = {}
    for p in the_plan.planned:
        if _cache_key(p) not in per_cell:
            per_cell[_cache_key(p)] = _cell_parts(view, spec, p)
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
    docs = (
        conversation_document(view, spec, sweep["_id"], p, order, user, per_cell)
        for order, p in enumerate(the_plan.planned)
        if p.key not in stored
    )
    added = store.sweeps.insert_conversations(docs)
    return sweep, added


def conversation_document(
    view: ExperimentView,
    spec: SweepSpec,
    sweep_id: str,
    planned: PlannedConversation,
    order: int,
    user: str,
    per_cell: dict[str, CellParts] | None = None,
) -> dict:
    """`per_cell` caches what every repetition of a cell shares (its validated spec but for the
    seed, its agents, its day split): building them once per cell rather than once per
    conversation is most of `sweep create`'s own time at 100,000 conversations."""
    cache_key = _cache_key(planned)
    parts = (per_cell or {}).get(cache_key)
    if parts is None:
        parts = _cell_parts(view, spec, planned)
        if per_cell is not None:
            per_cell[cache_key] = parts
    conv_spec = {**parts.spec, "seed": planned.seed}
    return ConversationsRepository.new_document(
        {
            "key": planned.key,
            "experiment_id": view.id,
            "experiment_version": view.version,
            "owner": user,
            "sweep_id": sweep_id,
            "order": order,
            "cell": dict(parts.cell),
            "cell_key": planned.cell_key,
            "cell_label": parts.label,
            "repetition": planned.repetition,
            "spec": conv_spec,
            "agents": [dict(agent) for agent in parts.agents],
            "day_split": list(parts.day_split),
            "lease_owner": None,
            "lease_expires_ms": 0,
            "claims": 0,
        }
    )


@dataclass(frozen=True)
class CellParts:
    spec: dict  # the ConversationSpec as stored; "seed" differs per repetition
    agents: tuple[dict, ...]
    day_split: tuple[int, ...]
    cell: dict  # Cell.as_dict()
    label: str  # Cell.label()


def _cache_key(planned: PlannedConversation) -> str:
    return f"{planned.cell_key}/{planned.seed is None}"


def _cell_parts(view: ExperimentView, spec: SweepSpec, planned: PlannedConversation) -> CellParts:
    conv_spec = _conversation_spec(view, spec, planned)
    agents = build_agents(view.experiment, conv_spec)
    return CellParts(
        spec=conv_spec.model_dump(mode="json"),
        agents=tuple({"name": a.name, "role": a.role, "model": a.llm.model} for a in agents),
        day_split=tuple(conv_spec.day_turns),
        cell=planned.cell.as_dict(),
        label=planned.cell.label(),
    )


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


def _conversation_spec(
    view: ExperimentView, spec: SweepSpec, planned: PlannedConversation
) -> ConversationSpec:
    """The spec a planned conversation runs with; a UserError if the cell cannot run."""
    cell = planned.cell
    experiment = view.experiment
    default = cell.role_llms[experiment.roles[0].name]
    try:
        return ConversationSpec(
            agents=cell.agents,
            total_messages=spec.total_messages,
            message_counting=spec.message_counting,
            allow_repeat_speaker=spec.allow_repeat_speaker,
            days=cell.days,
            speaker_method=cell.speaker_method,
            role_llms={r: to_llm_choice(experiment, m) for r, m in cell.role_llms.items()},
            manager_llm=to_llm_choice(experiment, cell.manager_llm) if cell.manager_llm else None,
            summarizer_llm=to_llm_choice(experiment, cell.summarizer_llm or default),
            seed=planned.seed,
            variant=cell.variant,
            defaults_applied=cell_defaults(view, cell)
            + ([] if planned.seed is not None else ["seed: none (not reproducible)"]),
        )
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise UserError(
            f"the cell {cell.label()} cannot run: {problem}",
            field="sweep",
            fix="adjust total_messages, days, message_counting or the cell's agents",
        ) from None


def status(store: Store, sweep_id: str) -> dict:
    """Counts by status, calls and tokens, the workers and the first failures: a handful of
    queries whatever the sweep's size (no conversation documents are loaded but failed ones,
    50 at most, and running ones)."""
    sweep = store.sweeps.get(sweep_id)
    totals = store.sweeps.status_totals(sweep_id)
    counts = {status: row["n"] for status, row in totals.items()}
    total = sum(counts.values())
    failed = (
        [
            {"id": d["_id"], "cell": d.get("cell_label"), "error": d.get("error")}
            for d in store.sweeps.failed_page(sweep_id, 50)
        ]
        if counts.get("failed")
        else []
    )
    return {
        "sweep_id": sweep_id,
        "name": sweep.get("name"),
        "experiment_id": sweep["experiment_id"],
        "total": total,
        "counts": {
            s: counts.get(s, 0) for s in ("pending", "running", "done", "failed", "interrupted")
        },
        "complete": counts.get("done", 0) == total,
        "calls": sum(row["calls"] for row in totals.values()),
        "tokens_out": sum(row["tokens_out"] for row in totals.values()),
        "workers": store.sweeps.running_owners(sweep_id) if counts.get("running") else [],
        "failed": failed,
    }


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


EMBEDDED_COMFORT = 20_000  # conversations; beyond this the embedded store gets slow to read


def embedded_scale_note(store: Store, conversations: int) -> str | None:
    """A warning when a large sweep goes into the embedded store, which evaluates every query in
    Python over the whole collection (bench/store_scale.py); None when it will be comfortable."""
    if conversations < EMBEDDED_COMFORT or is_server_collection(store.db.conversations):
        return None
    return (
        f"note: this sweep has {conversations:,} conversations and the database is the embedded "
        "store, which reads every conversation of the database for each status and list. At "
        "100,000 conversations it measured 12 s for sweep create, 4 to 6 s for sweep status "
        "and conversation list, and export and measures 2 to 7 minutes (on 2 CPUs). For sweeps "
        "this size a MongoDB server answers status and list from its indexes: "
        "--db mongodb://HOST:27017 (or SIM_DB)."
    )
