"""What a sweep stores for each planned conversation: its spec, agents and day split, built once
per cell (most of `sweep create`'s own time at 100,000 conversations was building them once per
conversation), and the sentences for the defaults a cell runs with."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.seeds import unseeded_note
from simulator.domain.sweep_names import resolve_llm, to_llm_choice
from simulator.errors import UserError
from simulator.memory.domain.settings import MemorySettings
from simulator.services.experiments import ExperimentView
from simulator.store.repositories.conversations import ConversationsRepository
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.domain.sweep import Cell, PlannedConversation, SweepSpec
from simulator.worlds.chat.engine.agents import build_agents
from simulator.worlds.chat.services import memory as chat_memory


def cell_defaults(view: ExperimentView, cell: Cell, run_seed: int | None = None) -> list[str]:
    """Sentences for every value of a cell the tool chose because the sweep did not say; with
    the sweep's `run_seed` they leave out a default LLM's own seed, which it replaces."""
    experiment = view.experiment
    notes = []
    for model in dict.fromkeys(
        [*cell.role_llms.values(), *(m for m in (cell.manager_llm, cell.summarizer_llm) if m)]
    ):
        note = resolve_llm(experiment, model, run_seed)[1]
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
    return notes + cell_memory(view, cell)[1]


def cell_choices(
    view: ExperimentView, cell: Cell
) -> tuple[dict[str, LLMChoice], LLMChoice | None, LLMChoice]:
    """The cell's agents', manager's and summarizer's LLMs as the experiment defines them."""
    experiment = view.experiment
    default = cell.role_llms[experiment.roles[0].name]
    role_llms = {r: to_llm_choice(experiment, m) for r, m in cell.role_llms.items()}
    manager = to_llm_choice(experiment, cell.manager_llm) if cell.manager_llm else None
    return role_llms, manager, to_llm_choice(experiment, cell.summarizer_llm or default)


def cell_seed_note(view: ExperimentView, cell: Cell) -> str:
    """What a cell run without the sweep's seed reproduces (its LLMs may carry their own)."""
    role_llms, manager, summarizer = cell_choices(view, cell)
    return unseeded_note([*role_llms.values(), manager, summarizer])


def cell_memory(view: ExperimentView, cell: Cell) -> tuple[MemorySettings, list[str]]:
    """The experiment's memory block as the cell runs it, and its notes."""
    model = cell.summarizer_llm or cell.role_llms[view.experiment.roles[0].name]
    return chat_memory.resolve(view.experiment, model)


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
    key = cache_key(planned)
    parts = (per_cell or {}).get(key)
    if parts is None:
        parts = cell_parts(view, spec, planned)
        if per_cell is not None:
            per_cell[key] = parts
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


def cache_key(planned: PlannedConversation) -> str:
    return f"{planned.cell_key}/{planned.seed is None}"


def cell_parts(view: ExperimentView, spec: SweepSpec, planned: PlannedConversation) -> CellParts:
    conv_spec = conversation_spec(view, spec, planned)
    agents = build_agents(view.experiment, conv_spec)
    return CellParts(
        spec=conv_spec.model_dump(mode="json"),
        agents=tuple({"name": a.name, "role": a.role, "model": a.llm.model} for a in agents),
        day_split=tuple(conv_spec.day_turns),
        cell=planned.cell.as_dict(),
        label=planned.cell.label(),
    )


def conversation_spec(
    view: ExperimentView, spec: SweepSpec, planned: PlannedConversation
) -> ConversationSpec:
    """The spec a planned conversation runs with; a UserError if the cell cannot run."""
    cell = planned.cell
    role_llms, manager, summarizer = cell_choices(view, cell)
    unseeded = [unseeded_note([*role_llms.values(), manager, summarizer])]
    try:
        return ConversationSpec(
            agents=cell.agents,
            total_messages=spec.total_messages,
            message_counting=spec.message_counting,
            allow_repeat_speaker=spec.allow_repeat_speaker,
            reply_cleaning=spec.reply_cleaning,
            speaker_format=spec.speaker_format,
            days=cell.days,
            speaker_method=cell.speaker_method,
            role_llms=role_llms,
            manager_llm=manager,
            summarizer_llm=summarizer,
            seed=planned.seed,
            variant=cell.variant,
            memory=cell_memory(view, cell)[0],
            defaults_applied=cell_defaults(view, cell, planned.seed)
            + ([] if planned.seed is not None else unseeded),
        )
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise UserError(
            f"the cell {cell.label()} cannot run: {problem}",
            field="sweep",
            fix="adjust total_messages, days, message_counting or the cell's agents",
        ) from None
