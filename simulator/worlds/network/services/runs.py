"""An opinion network's runs (its part of services/runs.py: plan, stored document, models,
run), shared by `llm-sim run`, sweeps and the tests."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from simulator.domain.llm_display import llm_name
from simulator.domain.yaml_io import validation_to_user_error
from simulator.engine import events as ev
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.embeddings import create_embedder
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.services.blocks import resolve_memory
from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.services.runs import RunOutcome, choose_llm, experiment_snapshot, recorder_for
from simulator.store import lineage
from simulator.store.store import Store
from simulator.worlds.network.domain.agents_table import AgentRow, agent_groups, read_agents
from simulator.worlds.network.domain.experiment import (
    SYNTHETIC_TABLE,
    THEORY,
    AgentRecord,
    NetworkExperiment,
    NetworkSettings,
    NetworkSpec,
    TheorySettings,
    check_free_chat,
    check_theory,
)
from simulator.worlds.network.domain.experiment_files import SYNTHETIC_PATH
from simulator.worlds.network.domain.graphs import build_graphs
from simulator.worlds.network.domain.scenario import load_scenario
from simulator.worlds.network.engine.run import NetworkRun, run_network
from simulator.worlds.network.engine.theory_run import run_theory


def build_spec(
    view: ExperimentView,
    *,
    llm: str | None = None,
    seed: int | None = None,
    settings: dict | None = None,
    base_dir: Path | None = None,
    theory: bool = False,
) -> NetworkSpec:
    """The experiment's settings with `settings` over them, resolved: the table's rows, the
    scenario's texts and the graph's edges. Every default that decides what runs is noted.
    `theory` makes it the coevolution theory's run (no model): it needs a seed to be replayed,
    so without one it draws one, stores it and says so."""
    experiment = view.experiment
    assert isinstance(experiment, NetworkExperiment)
    notes: list[str] = []
    choice = None
    if theory and llm is not None:
        raise UserError(
            "a theory run has no model", field="--llm", fix="leave --llm out, or --theory"
        )
    if not theory:
        choice = choose_llm(experiment, llm, "--llm", notes, seed)  # type: ignore[arg-type]
        if llm is None:
            notes.append(f"model: {llm_name(choice)} (not given; the experiment's first LLM)")
    overrides = {k: v for k, v in (settings or {}).items() if v is not None}
    try:
        chosen = NetworkSettings.model_validate(
            {**experiment.network.model_dump(mode="json"), **overrides}
        )
    except ValidationError as exc:
        raise validation_to_user_error(exc, "network", source=None, marks={}) from None
    check_free_chat(chosen)
    graphs = build_graphs(chosen.graph, base_dir)
    n = graphs[0].number_of_nodes()
    rows = read_agents(SYNTHETIC_PATH if chosen.agents == SYNTHETIC_TABLE else chosen.agents)
    if len(rows) < n:
        raise UserError(
            f"the agents table has {len(rows)} rows and the graph {n} nodes",
            field="network.agents",
            fix="give a table with a row per node, or a smaller graph",
        )
    rows = _group_rows(rows, n, chosen.group, notes)
    if theory:
        check_theory(chosen.theory, n)
        notes.extend(f"theory: {phrase}" for phrase in _theory_defaults(chosen, n))
        if seed is None:
            seed = secrets.randbelow(2**31)
            notes.append(f"seed: none given; the theory drew {seed} (stored: the run replays)")
    elif seed is None:
        notes.append("seed: none (sampling is not reproducible)")
    snapshots = [sorted((min(u, v), max(u, v)) for u, v in g.edges()) for g in graphs]
    memory = _memory(experiment.memory, theory, notes)
    check_prompt_choices(chosen, memory, theory)
    return NetworkSpec(
        settings=chosen,
        agents=[AgentRecord.of(row) for row in rows],
        scenario=load_scenario(chosen.scenario),
        snapshots=snapshots,
        model=THEORY if theory else "llm",
        llm=choice,
        seed=seed,
        defaults_applied=notes,
        memory=memory,
    )


def _group_rows(rows: list[AgentRow], n: int, group: int | None, notes: list[str]) -> list:
    """The rows that play: block `group` of n consecutive rows (the reference's groups), or
    the table's first n when no group is chosen."""
    if group is None:
        if len(rows) > n:
            notes.append(f"agents: the table's first {n} of {len(rows)} rows (one per graph node)")
        return rows[:n]
    groups = agent_groups(rows, n)
    if group >= len(groups):
        raise UserError(
            f"group {group} asks for rows {group * n + 1}..{(group + 1) * n} of a table of "
            f"{len(rows)} rows",
            field="network.group",
            fix=f"choose a group from 0 to {len(groups) - 1} ({len(groups)} groups of {n} rows)",
        )
    return groups[group]  # chosen, not a default: the header and the cell label name it


def check_prompt_choices(chosen: NetworkSettings, memory: MemorySettings, theory: bool) -> None:
    """The switches this tool can put together: the chat layout shows the last round's
    friends' answers and chats in messages; the accumulated layout keeps its own history, so
    it takes the default memory. The theory has no prompts."""
    if theory:
        return
    switches = chosen.prompts.resolved()
    if switches.layout == "chat":
        if switches.friends_rounds != "last" or switches.free_chat_as != "message":
            raise UserError(
                "the chat layout shows only the last round's friends' answers and holds free "
                "chat as a message stage",
                field="network.prompts",
                fix="use layout: accumulated (profile: reference) for friends_rounds: all or "
                "free_chat_as: opinion_round, or set them to last and message",
            )
        return
    if memory.kind != "summary":
        raise UserError(
            f"the accumulated prompt layout keeps its own history; memory.kind {memory.kind} "
            "cannot be shown in it",
            field="memory.kind",
            fix="leave memory out (summary) or use prompts layout: chat",
        )


def _memory(block: MemorySettings, theory: bool, notes: list[str]) -> MemorySettings:
    """The memory block resolved for a network (no hours to plan: planning off, noted), its
    embedder's name checked before anything is stored. The theory remembers nothing of its
    own, so a theory run keeps the default block and says the experiment's is unused."""
    if theory:
        if block.kind != "summary":
            notes.append(f"memory: the theory carries no memory; memory.kind {block.kind} unused")
        return MemorySettings()
    memory, memory_notes = resolve_memory(block, world_plans=False)
    notes.extend(memory_notes)
    return memory


def _theory_defaults(chosen: NetworkSettings, agents: int) -> list[str]:
    """The theory's parameters left at their defaults, as header phrases. (A stored experiment
    keeps every field, so "left at its default" is "equal to it".)"""
    theory, default = chosen.theory, TheorySettings()
    return [
        phrase
        for name, phrase in zip(
            TheorySettings.model_fields, theory.described(agents, chosen.rounds), strict=True
        )
        if getattr(theory, name) == getattr(default, name)
    ]


def plan(
    view: ExperimentView,
    options: dict[str, Any],
    *,
    llm: str | None = None,
    seed: int | None = None,
) -> NetworkSpec:
    """A network's spec from the run options: `theory` (the coevolution theory's run, no
    model) and the experiment's network settings by name over its own."""
    settings = dict(options)
    theory = bool(settings.pop("theory", False))
    return build_spec(view, llm=llm, seed=seed, settings=settings, theory=theory)


def run_document(
    view: ExperimentView, spec: NetworkSpec, user: str, extra: dict | None = None
) -> dict:
    """The fields of a stored network run (the store adds id, status, counters and times)."""
    dumped = spec.model_dump(mode="json")
    if spec.is_theory:  # every switch, defaults included: the run says what it played
        dumped["settings"]["theory"] = spec.settings.theory.full()
    agents = runs.agent_entries(spec.names, spec.llm, THEORY)
    return runs.document(view, dumped, agents, user, kind="network", **(extra or {}))


async def run(
    store: Store,
    run_id: str,
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
    on_call: Callable[[dict], None] | None = None,
    lease_owner: str | None = None,
    doc: dict | None = None,
    experiment: NetworkExperiment | None = None,
    spec: NetworkSpec | None = None,
) -> RunOutcome:
    """Run or resume one stored network run (a new run passes its experiment and spec: the
    spec holds all the run reads)."""
    doc = doc or store.conversations.get(run_id)
    if experiment is None:
        NetworkExperiment.from_stored(experiment_snapshot(store, doc))  # a run of this kind
    # a fork reads the rows before its fork point from its parent (store/lineage.py)
    recorder = recorder_for(store, doc, on_call, lease_owner, lineage.world_prefix(store, doc))
    if spec is None:
        spec = NetworkSpec.model_validate(doc["spec"])
    stream = spec.memory.is_stream and not spec.is_theory
    network_run = NetworkRun(
        run_id,
        spec,
        llms,
        recorder,
        on_event,
        stop or asyncio.Event(),
        create_embedder(spec.memory.embedder) if stream else None,
    )
    runner = run_theory if network_run.spec.is_theory else run_network
    status = await runner(network_run)
    return RunOutcome(run_id, status, recorder.error, dict(recorder.counters))
