"""Fork sweeps: `sweep create` with a `fork:` block (or --fork-from/--fork-at/--fork-edit).

Every planned conversation is a fork of one stored chat (services/forks.py checks the parent,
the point and the edit) stored as a sweep conversation: it is claimed, leased, run, resumed and
retried like any other, and runs through `conversations.run`, which reads the shared prefix
from the parent and applies the edit. The sweep's spec is filled from the parent
(domain/fork_sweep.py) and expanded by the usual machinery; each cell's conversation spec is the
parent's with the cell's models, speaker method and variants, and each branch's seed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pydantic import ValidationError

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.sweep_names import SweepError, resolve_llm, role_counts, to_llm_choice
from simulator.errors import UserError
from simulator.services import forks, sweeps
from simulator.services.experiments import ExperimentView
from simulator.services.forks import ForkPlan
from simulator.store.store import Store
from simulator.worlds.chat.domain.fork_sweep import (
    ForkBlock,
    ParentSettings,
    branch_key,
    calls_per_branch,
    from_parent,
    headline,
    paired_seed,
    refuse_changes,
)
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.domain.sweep import Cell, PlannedConversation, SweepSpec
from simulator.worlds.chat.domain.sweep_design import CELL_AGENTS
from simulator.worlds.chat.engine.agents import build_agents
from simulator.worlds.chat.services.sweep_documents import CellParts


@dataclass
class Prepared:
    """A fork sweep resolved against its parent: the branch point, the filled spec, the
    parent's experiment snapshot (the branches continue with its texts) and the notes."""

    branch: ForkPlan
    spec: SweepSpec
    notes: list[str]

    @property
    def view(self) -> ExperimentView:
        return self.branch.view

    @property
    def parent_spec(self) -> ConversationSpec:
        return self.branch.specs[0]


def prepare(store: Store, view: ExperimentView, spec: SweepSpec) -> Prepared:
    """Check the parent, the point, the edit and every field against the parent; fill the
    spec from it. Nothing is stored."""
    block = spec.fork or ForkBlock()
    for value, flag, what in (
        (block.parent, "from", "the conversation it branches"),
        (block.at, "at", "the message it branches at"),
    ):
        if value is None:
            raise UserError(
                f"a fork sweep needs {what}",
                field=f"fork.{flag}",
                fix="give --fork-from CONV_ID (conversation ids are per store: `llm-sim "
                "conversation list` prints them) and --fork-at DAY:INDEX (as `llm-sim "
                "conversation show` prints it)",
            )
    assert block.parent is not None and block.at is not None
    found = forks.branch(store, block.parent, block.at, block.edit, at_field="fork.at")
    if found.view.id != view.id:
        raise UserError(
            f"{block.parent} is a conversation of experiment {found.view.id}, not of {view.id}",
            field="experiment",
            fix=f"create the fork sweep of its own experiment: llm-sim sweep create "
            f"{found.view.id} … --fork-from {block.parent}",
        )
    parent = ParentSettings.of(block.parent, found.specs[0])
    roles = [r.name for r in found.view.experiment.roles]
    refuse_changes(spec, parent, _given_agents(spec, roles))
    normal = ForkBlock(
        parent=block.parent, at=str(found.point), edit=found.edit.text if found.edit else None
    )
    data, notes = from_parent(spec, parent, normal)
    if found.view.version != view.version:
        notes.append(
            f"experiment texts: the parent's (version {found.view.version}); {view.id} has "
            f"changed since (now version {view.version})"
        )
    return Prepared(found, sweeps.validate_spec(data), notes)


def _given_agents(spec: SweepSpec, roles: list[str]) -> dict[str, dict[str, int]]:
    """Agents per role the sweep itself gives (canonical), by the field that gives them."""
    given = {}
    try:
        if "agents" in spec.model_fields_set and spec.agents is not None:
            given["agents"] = role_counts(spec.agents, roles, "agents")
        for i, cell in enumerate(spec.cells):
            if CELL_AGENTS in cell:
                where = f"cells[{i}].{CELL_AGENTS}"
                given[where] = role_counts(cell[CELL_AGENTS], roles, where)
    except SweepError as exc:
        raise UserError(exc.message, field=exc.field, fix=exc.fix) from None
    return given


def plan(store: Store, view: ExperimentView, spec: SweepSpec, owner: str) -> sweeps.Plan:
    """What the fork sweep will run, without writing anything."""
    prep = prepare(store, view, spec)
    return _plan(store, prep, owner)


def _plan(store: Store, prep: Prepared, owner: str) -> sweeps.Plan:
    planned, breakdown = sweeps.expanded(prep.view, prep.spec, owner)
    fork = prep.spec.fork
    assert fork is not None and fork.parent is not None and fork.at is not None
    base = prep.spec.seed
    planned = [
        dataclasses.replace(p, key=branch_key(p.key, fork), seed=paired_seed(base, p.repetition))
        for p in planned
    ]
    cells = {p.cell_key: p.cell for p in planned}
    notes = dict.fromkeys(prep.notes)
    for cell in cells.values():
        _branch_spec(prep, cell, None)  # every cell can run before anything is stored
        notes.update(dict.fromkeys(_cell_notes(prep, cell)))
    edited = prep.branch.edit is not None
    parent_spec, point = prep.parent_spec, prep.branch.point
    turns_left = parent_spec.agent_turns - prep.branch.shared
    days_left = parent_spec.days - point.day + 1
    calls = sum(calls_per_branch(p.cell, turns_left, days_left, edited) for p in planned)
    stored = frozenset(store.sweeps.existing_keys([p.key for p in planned]))
    title = headline(fork.parent, fork.at, edited, len(planned))
    return sweeps.Plan(
        len(cells),
        len(planned),
        calls,
        len(stored),
        planned[0].cell,
        planned,
        list(notes),
        f"{title}; {breakdown}",
        stored,
        fork={
            "from": fork.parent,
            "at": fork.at,
            "edit": fork.edit,
            "shared_messages": prep.branch.shared,
            "headline": title,
            "from_parent": list(prep.notes),
        },
    )


def create(
    store: Store,
    view: ExperimentView,
    spec: SweepSpec,
    user: str,
    prepared: sweeps.Plan | None = None,
) -> tuple[dict, int]:
    """Create the fork sweep (or find the identical one) and store every branch not yet
    stored, each a fork document of the parent (`fork_group`: the sweep's id)."""
    prep = prepare(store, view, spec)
    the_plan = prepared if prepared is not None else _plan(store, prep, user)

    def parts(view: ExperimentView, spec: SweepSpec, p: PlannedConversation) -> CellParts:
        return _cell_parts(prep, p)

    notes: dict[str, list[str]] = {}

    def extra(sweep_id: str, p: PlannedConversation) -> dict:
        if p.cell_key not in notes:
            notes[p.cell_key] = [*prep.branch.notes, f"fork sweep {sweep_id}: {p.cell.label()}"]
        branch = dataclasses.replace(prep.branch, group=sweep_id, notes=notes[p.cell_key])
        return forks.fork_fields(branch, p.repetition)

    return sweeps.create(store, prep.view, prep.spec, user, the_plan, parts=parts, extra=extra)


def _cell_parts(prep: Prepared, planned: PlannedConversation) -> CellParts:
    spec = _branch_spec(prep, planned.cell, planned.seed)
    agents = build_agents(prep.view.experiment, spec)
    # the stored cell and label name the variants the branch runs with, the parent's included
    # (the key keeps the planned cell)
    shown = dataclasses.replace(planned.cell, variant=dict(spec.variant))
    return CellParts(
        spec=spec.model_dump(mode="json"),
        agents=tuple({"name": a.name, "role": a.role, "model": a.llm.model} for a in agents),
        day_split=tuple(spec.day_turns),
        cell=shown.as_dict(),
        label=shown.label(),
    )


def _branch_spec(prep: Prepared, cell: Cell, seed: int | None) -> ConversationSpec:
    """The parent's spec with the cell's models, speaker method and variants, and `seed`."""
    parent, experiment = prep.parent_spec, prep.view.experiment

    def choice(key: str | None, current: LLMChoice | None) -> LLMChoice | None:
        if key is None:
            return current
        return (
            current
            if current is not None and current.key == key
            else to_llm_choice(experiment, key)
        )

    update = {
        "role_llms": {r: choice(cell.role_llms[r], c) for r, c in parent.role_llms.items()},
        "speaker_method": cell.speaker_method,
        "manager_llm": choice(cell.manager_llm, parent.manager_llm) if cell.manager_llm else None,
        "summarizer_llm": choice(cell.summarizer_llm, parent.summarizer_llm),
        "variant": {**parent.variant, **cell.variant},
        "seed": seed,
        "defaults_applied": [*prep.notes, *_cell_notes(prep, cell)],
    }
    try:
        return ConversationSpec.model_validate(
            parent.model_copy(update=update).model_dump(mode="json")
        )
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise UserError(
            f"the cell {cell.label()} cannot continue {prep.branch.parent_id}: {problem}",
            field="sweep",
            fix="adjust the sweep's models or speaker methods",
        ) from None


def _cell_notes(prep: Prepared, cell: Cell) -> list[str]:
    """Sentences for a cell's choices nobody made: models the experiment does not list, an
    auto cell's manager."""
    parent, experiment = prep.parent_spec, prep.view.experiment
    kept = {
        c.key for c in (*parent.role_llms.values(), parent.manager_llm, parent.summarizer_llm) if c
    }
    notes = []
    for key in dict.fromkeys([*cell.role_llms.values(), cell.manager_llm, cell.summarizer_llm]):
        if key and key not in kept:
            note = resolve_llm(experiment, key)[1]
            if note:
                notes.append(note)
    if cell.speaker_method == "auto" and cell.manager_defaulted:
        notes.append(f"manager_llm: {cell.manager_llm} (not given; the first role's model)")
    return notes
