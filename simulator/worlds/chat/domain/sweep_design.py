"""How a sweep's cells come about (pure): its factors (each section's variants, linked groups of
sections varied together), the explicit cells it lists, the LLMs, days, agents and speaker
methods, all checked against the experiment and counted before a single cell is built; and the
plan's breakdown text."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from simulator.domain.limits import MAX_SWEEP_CONVERSATIONS
from simulator.domain.llm_choice import Name
from simulator.domain.sweep_names import (
    SweepError,
    check_llm_name,
    llm_assignments,
    llm_key,
    role_counts,
)
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import SPEAKER_METHODS
from simulator.worlds.chat.domain.variants import variant_slots

if TYPE_CHECKING:
    from simulator.worlds.chat.domain.sweep import SweepSpec

# Keys of a `cells` entry that are not sections; every other key names a section.
CELL_LLM, CELL_AGENTS, CELL_METHOD = "llm", "agents", "speaker_method"
MAX_LINKED_GROUPS = 50
MAX_LISTED = 10_000  # combinations of one linked group, or listed cells


class LinkedGroup(BaseModel):
    """Sections that vary together: one factor whose levels are the listed combinations, so
    paired designs (the guard's and the prisoner's personality as five pairs) are not crossed."""

    model_config = ConfigDict(extra="forbid")

    sections: list[Name] = Field(min_length=2, max_length=MAX_LINKED_GROUPS)
    combinations: list[list[Name]] = Field(min_length=1, max_length=MAX_LISTED)


@dataclass(frozen=True)
class Factor:
    """One axis of the product: a section's variants, or a linked group's combinations."""

    label: str
    levels: list[dict[str, str]]


@dataclass(frozen=True)
class ListedCell:
    """One entry of `cells`: its variants, and the factors it fixes (None: the sweep's own)."""

    variant: dict[str, str]
    llm: str | None = None
    agents: dict[str, int] | None = None
    speaker_method: str | None = None


@dataclass(frozen=True)
class Design:
    """A sweep resolved against its experiment, checked and counted before anything is built."""

    roles: list[str]
    factors: list[Factor]
    listed: list[ListedCell]  # empty: the full product
    assignments: list[dict[str, str]]
    day_values: list[int]
    maxima: dict[str, int]
    every_agent_combination: bool
    methods: list[str]
    cell_count: int  # cells, computed arithmetically
    agent_sets: list[dict[str, int]] = field(default_factory=list)

    def variant_sets(self) -> list[dict[str, str]]:
        return [
            {slot: name for level in combo for slot, name in level.items()}
            for combo in itertools.product(*(f.levels for f in self.factors))
        ]


def design(spec: SweepSpec, experiment: Experiment) -> Design:
    """Resolve and check every choice against the experiment, count the sweep arithmetically
    and refuse it when too large, before a single cell is built (SweepError names the field)."""
    roles = [r.name for r in experiment.roles]
    slots = variant_slots(experiment)
    for field_name, name in spec.named_llms():
        check_llm_name(experiment, field_name, name)
    maxima = role_counts(spec.agents, roles, "agents")
    factors, owners = _factors(spec, slots)
    listed = _listed(spec, slots, roles, owners, experiment)
    assignments = llm_assignments(spec, experiment, roles)
    day_values = range(1, spec.days + 1) if spec.every_day_count else [spec.days]
    day_values = [d for d in day_values if d * 2 <= spec.total_messages]
    agent_count = math.prod(maxima.values()) if spec.every_agent_combination else 1
    if agent_count > MAX_SWEEP_CONVERSATIONS:
        raise SweepError(
            "agents",
            f"every combination up to {maxima} is {agent_count:,} cells, more than the "
            f"{MAX_SWEEP_CONVERSATIONS:,} a sweep may hold",
            fix="use smaller maxima per role, or no every_agent_combination",
        )
    per_variant = len(day_values) * math.prod(len(f.levels) for f in factors)
    if listed:
        count = per_variant * sum(
            (1 if c.llm else len(assignments))
            * (1 if c.agents else agent_count)
            * (1 if c.speaker_method else len(spec.speaker_methods))
            for c in listed
        )
    else:
        count = per_variant * len(assignments) * agent_count * len(spec.speaker_methods)
    size = count * spec.repetitions
    if size > MAX_SWEEP_CONVERSATIONS:
        raise SweepError(
            "sweep",
            f"the sweep would make {size:,} conversations, more than the "
            f"{MAX_SWEEP_CONVERSATIONS:,} a sweep may hold",
            fix="use fewer repetitions, models, speaker methods, variants, linked combinations, "
            "cells or agent combinations, or split it into several sweeps",
        )
    result = Design(
        roles,
        factors,
        listed,
        assignments,
        day_values,
        maxima,
        spec.every_agent_combination,
        list(spec.speaker_methods),
        count,
    )
    result.agent_sets.extend(_agent_sets(spec, roles, maxima))
    return result


def _agent_sets(spec: SweepSpec, roles: list[str], maxima: dict[str, int]) -> list[dict[str, int]]:
    if not spec.every_agent_combination:
        return [dict(maxima)]
    return [
        dict(zip(roles, combo, strict=True))
        for combo in itertools.product(*(range(1, maxima[r] + 1) for r in roles))
    ]


_ONE_FACTOR_FIX = (
    "vary each section in one place only: under variants, in one linked group, or in cells "
    "(to vary two sections together, list both in one linked group)"
)


def _slot(slots: dict[str, list[str]], name: Any, where: str) -> str:
    lookup = {slot.lower(): slot for slot in slots}
    slot = lookup.get(str(name).strip().lower())
    if slot is None:
        raise SweepError(
            where,
            f"no section {name!r} with variants; choose from {sorted(slots) or 'none'}",
            fix="name a section as ROLE/TITLE or shared/TITLE, one that lists variants",
        )
    return slot


def _variant(slots: dict[str, list[str]], slot: str, name: Any, where: str) -> str:
    if not isinstance(name, str):
        hint = (
            " (YAML reads on/off/yes/no without quotes as true/false)"
            if isinstance(name, bool)
            else ""
        )
        raise SweepError(
            where,
            f"{name!r} is not a variant name{hint}",
            fix=f"write the variant's name in quotes, e.g. '{slots[slot][0]}'",
        )
    if name not in slots[slot]:
        raise SweepError(
            where,
            f"section {slot!r} has no variant {name!r}; it has {slots[slot]}",
            fix="use one of those names",
        )
    return name


def _claim(owners: dict[str, str], slot: str, where: str) -> None:
    if slot in owners:
        raise SweepError(
            where, f"section {slot!r} is already varied by {owners[slot]}", fix=_ONE_FACTOR_FIX
        )
    owners[slot] = where


def _factors(spec: SweepSpec, slots: dict[str, list[str]]) -> tuple[list[Factor], dict[str, str]]:
    """The product's factors (variants, then linked groups), and which field varies a section."""
    owners: dict[str, str] = {}
    factors = []
    for name, wanted in spec.variants.items():
        slot = _slot(slots, name, "variants")
        names = slots[slot] if wanted == "all" else list(wanted)
        for chosen in names:
            _variant(slots, slot, chosen, "variants")
        _claim(owners, slot, f"variants.{name}")
        factors.append(Factor(slot, [{slot: n} for n in names]))
    for i, group in enumerate(spec.linked):
        here = f"linked[{i}]"
        group_slots = []
        for j, name in enumerate(group.sections):
            slot = _slot(slots, name, f"{here}.sections[{j}]")
            _claim(owners, slot, f"{here}.sections[{j}]")
            group_slots.append(slot)
        levels, seen = [], set()
        for k, combo in enumerate(group.combinations):
            where = f"{here}.combinations[{k}]"
            if len(combo) != len(group_slots):
                example = [slots[s][0] for s in group_slots]
                raise SweepError(
                    where,
                    f"lists {len(combo)} variant(s) but {here}.sections names "
                    f"{len(group_slots)} section(s)",
                    fix=f"give one variant per section, in the order of sections {group_slots}, "
                    f"e.g. {example}",
                )
            for j, (slot, chosen) in enumerate(zip(group_slots, combo, strict=True)):
                _variant(slots, slot, chosen, f"{where}[{j}]")
            if tuple(combo) in seen:
                raise SweepError(
                    where,
                    f"the combination {combo} is listed twice",
                    fix="list each combination once (repetitions repeat a cell)",
                )
            seen.add(tuple(combo))
            levels.append(dict(zip(group_slots, combo, strict=True)))
        kind = "pairs" if len(group_slots) == 2 else "combinations"
        factors.append(Factor(f"{kind} of {' + '.join(group_slots)} (linked)", levels))
    return factors, owners


def _listed(
    spec: SweepSpec,
    slots: dict[str, list[str]],
    roles: list[str],
    owners: dict[str, str],
    experiment: Experiment,
) -> list[ListedCell]:
    """The explicit cells, each checked; sections they name may not be varied elsewhere."""
    listed, seen = [], set()
    for i, entry in enumerate(spec.cells):
        here = f"cells[{i}]"
        variant: dict[str, str] = {}
        llm = agents = method = None
        for key, value in entry.items():
            where = f"{here}.{key}"
            if key == CELL_LLM:
                if not isinstance(value, str) or not value.strip():
                    raise SweepError(
                        where,
                        f"{value!r} is not an LLM",
                        fix="give one model string (ollama:llama3) or an LLM entry's label",
                    )
                llm = llm_key(experiment, value)
            elif key == CELL_AGENTS:
                agents = role_counts(value, roles, where)
            elif key == CELL_METHOD:
                allowed = [m for m in SPEAKER_METHODS if m != "manual"]
                if value not in allowed:
                    raise SweepError(
                        where,
                        f"{value!r} is not a speaker method a sweep can run",
                        fix=f"use one of {', '.join(allowed)}",
                    )
                method = value
            else:
                slot = _slot(slots, key, where)
                if slot in owners:
                    raise SweepError(
                        where,
                        f"section {slot!r} is also varied by {owners[slot]}; a section listed "
                        "in cells is not varied by variants or linked as well",
                        fix=f"remove {slot!r} from {owners[slot].split('.')[0].split('[')[0]} "
                        "or from the cells",
                    )
                if slot in variant:
                    raise SweepError(where, f"names section {slot!r} twice", fix="name it once")
                variant[slot] = _variant(slots, slot, value, where)
        identity = (
            tuple(sorted(variant.items())),
            llm,
            tuple(sorted(agents.items())) if agents else None,
            method,
        )
        if identity in seen:
            raise SweepError(
                here, "is listed twice", fix="list each cell once (repetitions repeat a cell)"
            )
        seen.add(identity)
        listed.append(ListedCell(variant, llm, agents, method))
    return listed


def describe(spec: SweepSpec, experiment: Experiment) -> str:
    """How the cells came about, e.g. '2 Prisoner/Goal x 5 pairs of … (linked) x 2 shared/Risks
    = 20 variant cells x 1 LLM = 20 cells x 10 repetitions = 200 conversations'."""
    d = design(spec, experiment)
    plural = lambda n, word: f"{n:,} {word}{'' if n == 1 else 's'}"  # noqa: E731
    variants = [f"{len(f.levels)} {f.label}" for f in d.factors]
    variant_cells = math.prod(len(f.levels) for f in d.factors)
    if d.listed:
        variants.insert(0, plural(len(d.listed), "listed cell"))
        variant_cells *= len(d.listed)
    others = [plural(len(d.assignments), "LLM assignment" if spec.llm_assignments else "LLM")]
    if len(d.day_values) > 1:
        others.append(plural(len(d.day_values), "day count"))
    if len(d.agent_sets) > 1:
        others.append(plural(len(d.agent_sets), "agent combination"))
    if len(d.methods) > 1:
        others.append(plural(len(d.methods), "speaker method"))
    text = ""
    if variants:
        text = " x ".join(variants) + f" = {plural(variant_cells, 'variant cell')} x "
    text += " x ".join(others)
    if d.listed and any(c.llm or c.agents or c.speaker_method for c in d.listed):
        text += " (where a listed cell names none)"
    cell_count = d.cell_count
    return (
        f"{text} = {plural(cell_count, 'cell')} x {plural(spec.repetitions, 'repetition')} "
        f"= {plural(cell_count * spec.repetitions, 'conversation')}"
    )
