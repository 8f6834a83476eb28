"""Conversation operations shared by `llm-sim run`, `conversation …` and the menus."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from simulator.domain.experiment import Experiment, LLMChoice
from simulator.domain.fork import ForkEdit
from simulator.domain.seeds import unseeded_note
from simulator.domain.sweep_names import resolve_llm
from simulator.domain.yaml_io import validation_to_user_error
from simulator.engine import events as ev
from simulator.engine.recorder import StoreRecorder
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.base import FatalBackendError
from simulator.memory.services.blocks import embedder_for
from simulator.services.experiments import ExperimentView, parse_counts
from simulator.store import lineage
from simulator.store.lineage import Prefix
from simulator.store.store import Store
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.engine.agents import build_agents
from simulator.worlds.chat.engine.run import ConversationRun, llm_name, run_conversation
from simulator.worlds.chat.engine.speakers import InputFunction
from simulator.worlds.chat.services import memory as chat_memory

KIND = "conversation"


def choose_llm(
    experiment: Experiment,
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


def _refuse_ambiguous(experiment: Experiment, model: str, field: str) -> None:
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


def parse_role_models(pairs: tuple[str, ...], experiment: Experiment) -> dict[str, str]:
    chosen: dict[str, str] = {}
    for pair in pairs:
        role_name, sep, model = pair.partition("=")
        if not sep or not model.strip():
            raise UserError(
                f"{pair!r} is not ROLE=MODEL",
                field="--llm-for",
                fix="write e.g. --llm-for prisoner=ollama:llama3",
            )
        try:
            role = experiment.role(role_name)
        except KeyError as exc:
            raise UserError(
                str(exc.args[0]), field="--llm-for", fix="use one of the experiment's roles"
            ) from None
        chosen[role.name] = model.strip()
    return chosen


def build_spec(
    view: ExperimentView,
    *,
    agents: str,
    total_messages: int,
    days: int = 1,
    speaker: str = "round_robin",
    llm: str | None = None,
    llm_for: tuple[str, ...] = (),
    manager_llm: str | None = None,
    summarizer_llm: str | None = None,
    seed: int | None = None,
    message_counting: str = "agent_turns",
    allow_repeat_speaker: bool = False,
) -> ConversationSpec:
    """Validate every choice against the experiment; raise one UserError naming the field.

    `llm`, `llm_for`, `manager_llm` and `summarizer_llm` name an experiment's LLM entry by its
    label or its model string."""
    experiment = view.experiment
    counts = parse_counts(agents, experiment, field="--agents")
    per_role = parse_role_models(llm_for, experiment)
    notes: list[str] = left_out_roles(agents, counts)
    default = choose_llm(experiment, llm, "--llm", notes, seed)
    if llm is None:
        notes.append(f"agents' model: {llm_name(default)} (not given; the experiment's first LLM)")
    role_llms = {
        r.name: choose_llm(experiment, per_role[r.name], "--llm-for", notes, seed)
        if r.name in per_role
        else default
        for r in experiment.roles
    }
    first_role = experiment.roles[0].name
    agents_model = role_llms[first_role]
    whose = (
        "the agents' model"
        if len({c.key for c in role_llms.values()}) == 1
        else f"the model of the first role, {first_role}"
    )
    manager = None
    if manager_llm:
        manager = choose_llm(experiment, manager_llm, "--manager-llm", notes, seed)
    elif speaker == "auto":
        manager = agents_model
        notes.append(f"manager_llm: {llm_name(manager)} (not given; {whose})")
    if summarizer_llm:
        summarizer = choose_llm(experiment, summarizer_llm, "--summarizer-llm", notes, seed)
    else:
        summarizer = agents_model
        notes.append(f"summarizer_llm: {llm_name(summarizer)} (not given; {whose})")
    if seed is None:
        notes.append(unseeded_note([*role_llms.values(), manager, summarizer]))
    memory, memory_notes = chat_memory.resolve(experiment, llm_name(summarizer))
    data = {
        "agents": counts,
        "total_messages": total_messages,
        "message_counting": message_counting,
        "days": days,
        "speaker_method": speaker,
        "allow_repeat_speaker": allow_repeat_speaker,
        "role_llms": role_llms,
        "manager_llm": manager,
        "summarizer_llm": summarizer,
        "seed": seed,
        "defaults_applied": notes + memory_notes,
        "memory": memory,
    }
    try:
        spec = ConversationSpec.model_validate(data)
    except ValidationError as exc:
        raise validation_to_user_error(exc, "conversation", source=None, marks={}) from None
    return spec


def left_out_roles(agents: str, counts: dict[str, int]) -> list[str]:
    """The note for roles `--agents` did not name (each got one agent), e.g.
    "agents: Prisoner=1 (not in --agents; a role left out gets 1 agent)"."""
    named = {part.partition("=")[0].strip().lower() for part in agents.split(",")}
    left = [role for role in counts if role.lower() not in named]
    if not left:
        return []
    given = ",".join(f"{role}={counts[role]}" for role in left)
    return [f"agents: {given} (not in --agents; a role left out gets 1 agent)"]


def create(
    store: Store, view: ExperimentView, spec: ConversationSpec, user: str, extra: dict | None = None
) -> dict:
    """Store a pending conversation holding the spec and a snapshot of the experiment."""
    agents = build_agents(view.experiment, spec)
    store.users.ensure(user)
    return store.conversations.create(
        {
            "experiment_id": view.id,
            "experiment_version": view.version,
            "owner": user,
            "spec": spec.model_dump(mode="json"),
            "experiment": view.experiment.model_dump(mode="json"),
            "agents": [
                {"name": a.name, "role": a.role, "model": a.llm.model, "llm_label": a.llm.key}
                for a in agents
            ],
            "day_split": spec.day_turns,  # agent turns per day, under the spec's counting
            **(extra or {}),
        }
    )


async def preflight(spec: ConversationSpec, llms: LLMAccess) -> None:
    """Check every model before anything is written; a failure is a UserError (exit 2)."""
    choices = [*spec.role_llms.values(), *(c for c in (spec.manager_llm, spec.summarizer_llm) if c)]
    try:
        await llms.preflight(choices)
    except FatalBackendError as exc:
        raise UserError(str(exc)) from None


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
    """The recorder of a stored run (a chat or a grid): a run never started has nothing of
    its own to read back; a fork reads what it shares from its parent (`shared`)."""
    return StoreRecorder(
        store,
        doc["_id"],
        on_call=on_call,
        lease_owner=lease_owner,
        never_started=doc.get("started_at") is None,
        shared=shared,
    )


@dataclass
class RunOutcome:
    conversation_id: str
    status: str
    error: str | None
    counters: dict


async def run(
    store: Store,
    conversation_id: str,
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
    manual_input: InputFunction | None = None,
    experiment: Experiment | None = None,
    on_call: Callable[[dict], None] | None = None,
    lease_owner: str | None = None,
    doc: dict | None = None,
) -> RunOutcome:
    """Run or resume one stored conversation. A sweep passes its experiment snapshot and the
    conversation document its claim returned."""
    doc = doc or store.conversations.get(conversation_id)
    if experiment is None:
        experiment = Experiment.from_stored(experiment_snapshot(store, doc))
    spec = ConversationSpec.model_validate(doc["spec"])
    recorder = recorder_for(store, doc, on_call, lease_owner, lineage.prefix(store, doc))
    conversation = ConversationRun(
        conversation_id,
        experiment,
        spec,
        llms,
        recorder,
        on_event,
        stop or asyncio.Event(),
        manual_input,
        embedder_for(spec.memory),
        ForkEdit.from_stored(doc.get("fork_edit")),
    )
    status = await run_conversation(conversation)
    return RunOutcome(conversation_id, status, recorder.error, dict(recorder.counters))


def transcript(store: Store, conversation_id: str) -> dict:
    """The run document and its rows, whatever its world, for display or --json
    (simulator/services/transcripts.py)."""
    from simulator.services.transcripts import transcript as read

    return read(store, conversation_id)


def prompts(store: Store, conversation_id: str) -> list[dict]:
    """Every call of the conversation with the exact messages it sent, in order."""
    store.conversations.get(conversation_id)
    rows = []
    for call in store.calls.for_conversation(conversation_id):
        rows.append({**call, "messages": store.calls.prompt(call["prompt_hash"])})
    return rows


def set_favourite(store: Store, conversation_id: str, user: str, favourite: bool) -> None:
    store.conversations.get(conversation_id)
    store.users.ensure(user)
    store.users.set_favourite(user, KIND, conversation_id, favourite)
