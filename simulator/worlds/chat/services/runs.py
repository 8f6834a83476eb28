"""A group chat's runs (its part of services/runs.py: plan, stored document, models, run) and
the conversation operations `conversation …` and the menus share."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from simulator.domain.fork import ForkEdit
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.seeds import unseeded_note
from simulator.domain.yaml_io import validation_to_user_error
from simulator.engine import events as ev
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.memory.services.blocks import embedder_for
from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.services.runs import (  # noqa: F401  (callers import them from here too)
    RunOutcome,
    choose_llm,
    experiment_snapshot,
    prompts,
    recorder_for,
    run_view,
    set_favourite,
    transcript,
)
from simulator.store import lineage
from simulator.store.store import Store
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.profile import profile_switches
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.engine.agents import build_agents
from simulator.worlds.chat.engine.run import ConversationRun, llm_name, run_conversation
from simulator.worlds.chat.engine.speakers import InputFunction
from simulator.worlds.chat.services import memory as chat_memory
from simulator.worlds.chat.services.roles import parse_counts


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


# the keyword options `plan` passes on to `build_spec` (the rest it reads itself)
SPEC_OPTIONS = (
    "days",
    "speaker",
    "llm_for",
    "manager_llm",
    "summarizer_llm",
    "message_counting",
    "allow_repeat_speaker",
)
SWITCHES = ("reply_cleaning", "speaker_format")  # over the profile's, when given


def plan(
    view: ExperimentView,
    options: dict[str, Any],
    *,
    llm: str | None = None,
    seed: int | None = None,
) -> ConversationSpec:
    """A chat's spec from the run options (`agents` and `total_messages` required; `profile`
    and the switches over it; the rest as `build_spec` takes them)."""
    given = {k: v for k, v in options.items() if v is not None}
    agents, total_messages = given.pop("agents", None), given.pop("total_messages", None)
    if agents is None or total_messages is None:
        missing = "--agents" if agents is None else "--messages"
        raise UserError(
            f"a chat experiment needs {missing}",
            field=missing,
            fix="give e.g. --agents guard=1,prisoner=2 --messages 20",
        )
    switches = profile_switches(given.pop("profile", "default"))
    switches.update({name: given.pop(name) for name in SWITCHES if name in given})
    unknown = [name for name in given if name not in SPEC_OPTIONS]
    if unknown:
        known = ", ".join(("agents", "messages", "profile", *SWITCHES, *SPEC_OPTIONS))
        raise UserError(
            f"{', '.join(unknown)}: not a setting of a group chat",
            field=unknown[0],
            fix=f"use one of {known}",
        )
    if "llm_for" in given:
        given["llm_for"] = tuple(given["llm_for"])
    spec = build_spec(
        view, agents=agents, total_messages=int(total_messages), llm=llm, seed=seed, **given
    )
    return spec.model_copy(update=switches)


def run_document(
    view: ExperimentView, spec: ConversationSpec, user: str, extra: dict | None = None
) -> dict:
    """The fields of a stored conversation: the house's, each agent's role and the day split."""
    agents = [
        {"name": a.name, "role": a.role, "model": a.llm.model, "llm_label": a.llm.key}
        for a in build_agents(view.experiment, spec)
    ]
    dumped = spec.model_dump(mode="json")
    # agent turns per day, under the spec's counting
    return runs.document(view, dumped, agents, user, day_split=spec.day_turns, **(extra or {}))


def models(spec: ConversationSpec) -> list[LLMChoice]:
    """Every agent's model, the manager's and the summarizer's."""
    return [*spec.role_llms.values(), *(c for c in (spec.manager_llm, spec.summarizer_llm) if c)]


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
    spec: ConversationSpec | None = None,
) -> RunOutcome:
    """Run or resume one stored conversation. A sweep passes its experiment snapshot and the
    conversation document its claim returned; a new run its experiment and spec too."""
    doc = doc or store.conversations.get(conversation_id)
    if experiment is None:
        experiment = Experiment.from_stored(experiment_snapshot(store, doc))
    if spec is None:
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


def stored_rows(store: Store, doc: dict) -> dict:
    """A conversation's messages and summaries, a fork's prefix first."""
    messages, summaries = lineage.full_transcript(store, doc)
    return {"messages": messages, "summaries": summaries}
