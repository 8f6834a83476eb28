"""A sweep: every combination a researcher asks for, expanded into conversation specs (pure)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simulator.domain.conversation import SpeakerMethod
from simulator.domain.experiment import Experiment, LLMChoice
from simulator.domain.ids import content_hash
from simulator.domain.variants import variant_slots

MANAGER, SUMMARIZER = "manager", "summarizer"


class SweepSpec(BaseModel):
    """What to vary. One LLM per conversation (`llms`) or explicit assignments per role."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="sweep", min_length=1, max_length=120)
    repetitions: int = Field(default=1, ge=1, le=10_000)
    llms: list[str] = Field(default_factory=list)
    llm_assignments: list[dict[str, str]] = Field(default_factory=list)
    manager_llm: str | None = None
    summarizer_llm: str | None = None
    total_messages: int = Field(ge=2, le=100_000)
    days: int = Field(default=1, ge=1, le=1000)
    every_day_count: bool = False  # try every value 1..days
    agents: dict[str, int] = Field(min_length=1)  # fixed count, or the maximum per role
    every_agent_combination: bool = False  # every combination 1..max per role
    speaker_methods: list[SpeakerMethod] = Field(
        default_factory=lambda: ["round_robin"], min_length=1
    )
    variants: dict[str, list[str] | Literal["all"]] = Field(default_factory=dict)
    seed: int | None = Field(default=None, ge=0)

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
        return self


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


def conversation_key(experiment_version: str, cell: Cell, repetition: int) -> str:
    """Deterministic: the same experiment version, cell and repetition always give this key."""
    return "k_" + content_hash(
        {"v": experiment_version, "cell": cell.as_dict(), "r": repetition}, 24
    )


def expand(
    spec: SweepSpec, experiment: Experiment, experiment_version: str
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
                    conversation_key(experiment_version, cell, repetition),
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
        if method == "auto" and manager is None:
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
        match = [r for r in roles if r.lower() == name.lower()]
        if not match:
            raise ValueError(f"agents: unknown role {name!r}; the roles are {roles}")
        if count < 1:
            raise ValueError(f"agents: role {match[0]!r} needs at least one agent")
        counts[match[0]] = count
    maxima = [counts.get(r, 1) for r in roles]
    if not spec.every_agent_combination:
        return [dict(zip(roles, maxima, strict=True))]
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
    """Raise ValueError for choices the experiment cannot satisfy."""
    if spec.days * 2 > spec.total_messages and not spec.every_day_count:
        raise ValueError(
            f"{spec.days} days need at least {spec.days * 2} messages; got {spec.total_messages}"
        )
    if spec.total_messages % 2:
        raise ValueError(f"total_messages must be even (got {spec.total_messages})")


def to_llm_choice(experiment: Experiment, model: str) -> LLMChoice:
    for choice in experiment.llms:
        if choice.model == model:
            return choice
    return LLMChoice(model=model)


def calls_per_conversation(cell: Cell, total_messages: int) -> int:
    """Expected LLM calls without retries: one per message, one per manager pick, one per day."""
    return total_messages * (2 if cell.speaker_method == "auto" else 1) + cell.days
