"""A sweep: every combination a researcher asks for, expanded into conversation specs (pure)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simulator.domain.conversation import SpeakerMethod
from simulator.domain.experiment import Experiment, LLMChoice, Name
from simulator.domain.ids import content_hash
from simulator.domain.limits import (
    MAX_AGENTS_PER_ROLE,
    MAX_ROLES,
    MAX_SEED,
    MAX_SWEEP_CONVERSATIONS,
    check_sweep_size,
)
from simulator.domain.variants import variant_slots

MANAGER, SUMMARIZER = "manager", "summarizer"
AgentCount = Annotated[int, Field(ge=1, le=MAX_AGENTS_PER_ROLE)]


class SweepSpec(BaseModel):
    """What to vary. One LLM per conversation (`llms`) or explicit assignments per role."""

    model_config = ConfigDict(extra="forbid")

    name: Name = Field(default="sweep", min_length=1, max_length=120)
    repetitions: int = Field(default=1, ge=1, le=10_000)
    llms: list[str] = Field(default_factory=list, max_length=100)
    llm_assignments: list[dict[str, str]] = Field(default_factory=list, max_length=1000)
    manager_llm: str | None = None
    summarizer_llm: str | None = None
    total_messages: int = Field(ge=2, le=100_000)
    days: int = Field(default=1, ge=1, le=1000)
    every_day_count: bool = False  # try every value 1..days
    # a fixed count per role, or the maximum per role with every_agent_combination
    agents: dict[str, AgentCount] = Field(min_length=1, max_length=MAX_ROLES)
    every_agent_combination: bool = False  # every combination 1..max per role
    speaker_methods: list[SpeakerMethod] = Field(
        default_factory=lambda: ["round_robin"], min_length=1
    )
    variants: dict[str, list[str] | Literal["all"]] = Field(default_factory=dict)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)

    @model_validator(mode="after")
    def _bounded_size(self) -> SweepSpec:
        """Refuse a sweep too large to hold before anything is expanded (variants "all" count
        once here; `check_sweep_size` with the experiment's slots gives the exact figure)."""
        check_sweep_size(self)
        return self

    @model_validator(mode="after")
    def _one_way_to_choose_llms(self) -> SweepSpec:
        if self.llms and self.llm_assignments:
            raise ValueError("give either llms (one per conversation) or llm_assignments, not both")
        if len(set(self.speaker_methods)) != len(self.speaker_methods):
            raise ValueError("speaker_methods lists a method twice")
        if "manual" in self.speaker_methods:
            raise ValueError(
                "speaker method 'manual' needs a person at every turn; sweeps run unattended"
            )
        self._check_model_strings()
        return self

    def _check_model_strings(self) -> None:
        """Every model string is checked here, before a plan is made or anything stored."""
        from simulator.domain.model_strings import check_model_string

        named = [(f"llms[{i}]", m) for i, m in enumerate(self.llms)]
        for i, assignment in enumerate(self.llm_assignments):
            named += [(f"llm_assignments[{i}].{role}", m) for role, m in assignment.items()]
        named += [
            (f, m)
            for f, m in (("manager_llm", self.manager_llm), ("summarizer_llm", self.summarizer_llm))
            if m is not None
        ]
        for field_name, model in named:
            try:
                check_model_string(model)
            except ValueError as exc:
                raise ValueError(f"{field_name}: {exc}") from None


@dataclass(frozen=True)
class Cell:
    """One combination of factors; a sweep runs `repetitions` conversations per cell."""

    role_llms: dict[str, str]
    manager_llm: str | None
    summarizer_llm: str | None
    days: int
    agents: dict[str, int]
    speaker_method: str
    variant: dict[str, str]
    # True when the sweep named no manager for an `auto` cell and the first role's model was
    # used; recorded and printed, not part of the cell's identity (the model itself is).
    manager_defaulted: bool = False

    def as_dict(self) -> dict:
        return {
            "role_llms": self.role_llms,
            "manager_llm": self.manager_llm,
            "summarizer_llm": self.summarizer_llm,
            "days": self.days,
            "agents": self.agents,
            "speaker_method": self.speaker_method,
            "variant": self.variant,
        }

    def label(self) -> str:
        agents = "v".join(str(n) for n in self.agents.values())
        models = "/".join(dict.fromkeys(self.role_llms.values()))
        variant = ",".join(f"{k.split('/')[-1]}={v}" for k, v in self.variant.items())
        return f"{models} {agents} d{self.days} {self.speaker_method}" + (
            f" [{variant}]" if variant else ""
        )


@dataclass(frozen=True)
class PlannedConversation:
    key: str
    cell: Cell
    cell_key: str
    repetition: int
    seed: int | None


def conversation_key(
    experiment_version: str,
    cell: Cell,
    repetition: int,
    *,
    total_messages: int,
    seed: int | None,
    owner: str | None,
) -> str:
    """Deterministic, and covering everything that decides what a conversation is.

    A conversation's spec is built from exactly these: the experiment version (which fixes its
    texts and every listed LLM's parameters), the cell, the message total and the seed. The
    owner is part of it too, so one researcher's sweep never adopts another's conversations.
    Two sweeps share a conversation only when it would run identically.
    """
    return "k_" + content_hash(
        {
            "v": experiment_version,
            "cell": cell.as_dict(),
            "r": repetition,
            "total_messages": total_messages,
            "seed": seed,
            "owner": owner,
        },
        24,
    )


def expand(
    spec: SweepSpec, experiment: Experiment, experiment_version: str, owner: str | None = None
) -> list[PlannedConversation]:
    """Every conversation of the sweep, in a stable order (cells, then repetitions)."""
    check(spec, experiment)
    planned = []
    for cell in cells(spec, experiment):
        cell_key = content_hash(cell.as_dict(), 16)
        for repetition in range(1, spec.repetitions + 1):
            seed = (
                None
                if spec.seed is None
                else int(content_hash([spec.seed, cell_key, repetition], 8), 16)
            )
            planned.append(
                PlannedConversation(
                    conversation_key(
                        experiment_version,
                        cell,
                        repetition,
                        total_messages=spec.total_messages,
                        seed=seed,
                        owner=owner,
                    ),
                    cell,
                    cell_key,
                    repetition,
                    seed,
                )
            )
    return planned


def cells(spec: SweepSpec, experiment: Experiment) -> list[Cell]:
    roles = [r.name for r in experiment.roles]
    assignments = _assignments(spec, experiment, roles)
    day_values = range(1, spec.days + 1) if spec.every_day_count else [spec.days]
    agent_sets = _agent_sets(spec, roles)
    variant_sets = _variant_sets(spec, experiment)
    found = []
    for assignment, days, agents, method, variant in itertools.product(
        assignments, day_values, agent_sets, spec.speaker_methods, variant_sets
    ):
        if days * 2 > spec.total_messages:
            continue
        role_llms = {r: assignment[r] for r in roles}
        manager = assignment.get(MANAGER) or spec.manager_llm
        defaulted = method == "auto" and manager is None
        if defaulted:
            manager = role_llms[roles[0]]
        found.append(
            Cell(
                role_llms,
                manager if method == "auto" else None,
                assignment.get(SUMMARIZER) or spec.summarizer_llm,
                days,
                agents,
                method,
                variant,
                manager_defaulted=defaulted,
            )
        )
    return found


def _assignments(spec: SweepSpec, experiment: Experiment, roles: list[str]) -> list[dict[str, str]]:
    if spec.llm_assignments:
        result = []
        for i, assignment in enumerate(spec.llm_assignments):
            canonical = {}
            for name, model in assignment.items():
                if name.lower() in (MANAGER, SUMMARIZER):
                    canonical[name.lower()] = model
                else:
                    try:
                        canonical[experiment.role(name).name] = model
                    except KeyError as exc:
                        raise ValueError(f"llm_assignments[{i}]: {exc.args[0]}") from None
            missing = [r for r in roles if r not in canonical]
            if missing:
                raise ValueError(f"llm_assignments[{i}] names no model for role {missing[0]!r}")
            result.append(canonical)
        return result
    models = spec.llms or [experiment.llms[0].model]
    return [dict.fromkeys(roles, model) for model in models]


def _agent_sets(spec: SweepSpec, roles: list[str]) -> list[dict[str, int]]:
    counts = {}
    for name, count in spec.agents.items():
        match = [r for r in roles if r.lower() == name.strip().lower()]
        if not match:
            raise ValueError(f"agents: unknown role {name!r}; the roles are {roles}")
        if not 1 <= count <= MAX_AGENTS_PER_ROLE:
            raise ValueError(
                f"agents: role {match[0]!r} needs 1 to {MAX_AGENTS_PER_ROLE} agents (got {count})"
            )
        if match[0] in counts:
            raise ValueError(f"agents: role {match[0]!r} is given twice")
        counts[match[0]] = count
    maxima = [counts.get(r, 1) for r in roles]
    if not spec.every_agent_combination:
        return [dict(zip(roles, maxima, strict=True))]
    combinations = math.prod(maxima)  # counted before anything is expanded
    if combinations > MAX_SWEEP_CONVERSATIONS:
        raise ValueError(
            f"agents: every combination up to {dict(zip(roles, maxima, strict=True))} is "
            f"{combinations:,} cells, more than the {MAX_SWEEP_CONVERSATIONS:,} a sweep may hold"
        )
    return [
        dict(zip(roles, combo, strict=True))
        for combo in itertools.product(*(range(1, m + 1) for m in maxima))
    ]


def _variant_sets(spec: SweepSpec, experiment: Experiment) -> list[dict[str, str]]:
    slots = variant_slots(experiment)
    lookup = {slot.lower(): slot for slot in slots}
    axes: list[tuple[str, list[str]]] = []
    for name, wanted in spec.variants.items():
        slot = lookup.get(name.strip().lower())
        if slot is None:
            raise ValueError(
                f"variants: no section {name!r} with variants; "
                f"choose from {sorted(slots) or 'none'}"
            )
        names = slots[slot] if wanted == "all" else list(wanted)
        unknown = [n for n in names if n not in slots[slot]]
        if unknown:
            raise ValueError(
                f"variants: section {slot!r} has no variant {unknown[0]!r}; it has {slots[slot]}"
            )
        axes.append((slot, names))
    return [
        dict(zip([a for a, _ in axes], combo, strict=True))
        for combo in itertools.product(*(n for _, n in axes))
    ]


def check(spec: SweepSpec, experiment: Experiment) -> None:
    """Raise ValueError for choices the experiment cannot satisfy, or a sweep too large to
    expand (counted arithmetically, variants 'all' included, before anything is built)."""
    check_sweep_size(spec, variant_slots(experiment))
    if spec.days * 2 > spec.total_messages and not spec.every_day_count:
        raise ValueError(
            f"{spec.days} days need at least {spec.days * 2} messages; got {spec.total_messages}"
        )
    if spec.total_messages % 2:
        raise ValueError(f"total_messages must be even (got {spec.total_messages})")


def to_llm_choice(experiment: Experiment, model: str) -> LLMChoice:
    """The experiment's own choice for `model`; else `model` with the experiment's default
    sampling (its first LLM's parameters), never with no parameters at all."""
    return resolve_llm(experiment, model)[0]


def resolve_llm(experiment: Experiment, model: str) -> tuple[LLMChoice, str | None]:
    """An LLM choice for a model string, and a sentence saying which defaults were applied
    when the experiment does not list that model (None when it does)."""
    model = model.strip()
    for choice in experiment.llms:
        if choice.model == model:
            return choice, None
    default = experiment.llms[0]
    choice = LLMChoice(model=model, params=default.params)
    shown = ", ".join(f"{k}={v}" for k, v in default.params.as_dict().items()) or "none set"
    return choice, (
        f"{model} is not listed in the experiment: it runs with the sampling parameters of the "
        f"experiment's default LLM {default.model} ({shown})"
    )


def calls_per_conversation(cell: Cell, total_messages: int) -> int:
    """Expected LLM calls without retries: one per message, one per manager pick, one per day."""
    return total_messages * (2 if cell.speaker_method == "auto" else 1) + cell.days
