"""A sweep: every combination a researcher asks for, expanded into conversation specs (pure).

The model (`SweepSpec`) and its expansion into cells and planned conversations live here; a
cell, a planned conversation and their keys in `sweep_cells`; how the cells come about
(factors, linked groups, listed cells, the plan's breakdown) in `sweep_design`; what the names
in a sweep mean (LLMs, roles) in `sweep_names`. Their public names are importable from here.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from simulator.domain.ids import content_hash
from simulator.domain.limits import (
    MAX_AGENTS_PER_ROLE,
    MAX_ROLES,
    MAX_SEED,
    check_sweep_size,
)
from simulator.domain.llm_choice import Name
from simulator.domain.sweep_names import (
    MANAGER,
    SUMMARIZER,
    SweepError,
    resolve_llm,
    to_llm_choice,
)
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.fork_sweep import ForkBlock
from simulator.worlds.chat.domain.profile import ChatProfile, profile_switches
from simulator.worlds.chat.domain.spec import (
    MessageCounting,
    ReplyCleaning,
    SpeakerFormat,
    SpeakerMethod,
)
from simulator.worlds.chat.domain.sweep_cells import (
    SWITCH_DEFAULTS,
    Cell,
    CellKeys,
    PlannedConversation,
    conversation_key,
    repetition_seed,
)
from simulator.worlds.chat.domain.sweep_design import (
    CELL_AGENTS,
    CELL_LLM,
    CELL_METHOD,
    MAX_LINKED_GROUPS,
    MAX_LISTED,
    Design,
    Factor,
    LinkedGroup,
    ListedCell,
    describe,
    design,
)

__all__ = [
    "CELL_AGENTS",
    "CELL_LLM",
    "CELL_METHOD",
    "MANAGER",
    "MAX_LINKED_GROUPS",
    "MAX_LISTED",
    "SUMMARIZER",
    "SWITCH_DEFAULTS",
    "AgentCount",
    "Cell",
    "Design",
    "Factor",
    "LinkedGroup",
    "ListedCell",
    "PlannedConversation",
    "SweepError",
    "SweepSpec",
    "calls_per_conversation",
    "cells",
    "check",
    "conversation_key",
    "describe",
    "design",
    "expand",
    "resolve_llm",
    "to_llm_choice",
]

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
    # required unless the sweep forks a conversation (`fork`), whose own are taken
    total_messages: int | None = Field(default=None, ge=2, le=100_000)
    days: int = Field(default=1, ge=1, le=1000)
    every_day_count: bool = False  # try every value 1..days
    # a fixed count per role, or the maximum per role with every_agent_combination
    agents: dict[str, AgentCount] | None = Field(default=None, min_length=1, max_length=MAX_ROLES)
    every_agent_combination: bool = False  # every combination 1..max per role
    speaker_methods: list[SpeakerMethod] = Field(
        default_factory=lambda: ["round_robin"], min_length=1
    )
    variants: dict[str, list[str] | Literal["all"]] = Field(default_factory=dict)
    # Groups of sections varied together (each group one factor; see LinkedGroup).
    linked: list[LinkedGroup] = Field(default_factory=list, max_length=MAX_LINKED_GROUPS)
    # An explicit list of cells (section -> variant, optionally llm / agents / speaker_method),
    # used instead of the product for the sections they name.
    cells: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_LISTED)
    # How total_messages is counted; "reference": as the reference tool (20 gives 19 turns).
    message_counting: MessageCounting = "agent_turns"
    # As for one conversation: True lets auto / manual pick the agent who just spoke.
    allow_repeat_speaker: bool = False
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    # The chat switches every conversation runs with (domain/conversation.py); `profile:` in a
    # file sets both (domain/chat_profile.py) and is not kept: the switches are.
    reply_cleaning: ReplyCleaning = "speakers"
    speaker_format: SpeakerFormat = "prefix"
    # Every conversation branches this stored chat at one message (domain/fork_sweep.py); the
    # parent's agents, messages and days are filled in by services/fork_sweeps.py.
    fork: ForkBlock | None = None

    @model_validator(mode="before")
    @classmethod
    def _profile(cls, data: Any) -> Any:
        """`profile: reference` stands for its switches; a switch the file names wins."""
        if isinstance(data, dict) and "profile" in data:
            data = dict(data)
            profile: ChatProfile = data.pop("profile")
            if profile not in ("default", "reference"):
                raise ValueError(f"profile must be default or reference, not {profile!r}")
            data = {**profile_switches(profile), **data}
        return data

    @model_serializer(mode="wrap")
    def _without_fork(self, handler: SerializerFunctionWrapHandler) -> dict:
        """A sweep that forks nothing dumps as before `fork` existed (stored specs, keys), and
        the chat switches at their defaults as before they existed."""
        data = handler(self)
        if isinstance(data, dict) and self.fork is None:
            data.pop("fork", None)
        if isinstance(data, dict):
            for name, default in SWITCH_DEFAULTS.items():
                if data.get(name) == default:
                    data.pop(name, None)
        return data

    @model_validator(mode="after")
    def _counts_given(self) -> SweepSpec:
        if self.fork is None:
            for name in ("total_messages", "agents"):
                if getattr(self, name) is None:
                    raise ValueError(
                        f"{name} is required (a sweep needs total_messages and agents per "
                        "role, unless it forks a conversation with fork: or --fork-from)"
                    )
        return self

    @model_validator(mode="after")
    def _bounded_size(self) -> SweepSpec:
        """Refuse a sweep too large to hold before anything is expanded (variants "all" count
        once here; `check` with the experiment gives the exact figure, linked groups and listed
        cells included)."""
        if self.total_messages is None or self.agents is None:  # a fork's, filled in later
            return self
        if not self.cells:  # a listed cell may fix its LLM: counted exactly by `check`
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
        """Every model string is checked here, before a plan is made or anything stored. A name
        without a backend prefix is an LLM entry's label, checked against the experiment by
        `check`."""
        from simulator.domain.model_strings import check_model_string

        for field_name, model in self.named_llms():
            if ":" not in model:
                continue
            try:
                check_model_string(model)
            except ValueError as exc:
                raise ValueError(f"{field_name}: {exc}") from None

    def named_llms(self) -> list[tuple[str, str]]:
        """(field, name) for every LLM the sweep names: model strings or entries' labels."""
        named = [(f"llms[{i}]", m) for i, m in enumerate(self.llms)]
        for i, assignment in enumerate(self.llm_assignments):
            named += [(f"llm_assignments[{i}].{role}", m) for role, m in assignment.items()]
        named += [
            (f, m)
            for f, m in (("manager_llm", self.manager_llm), ("summarizer_llm", self.summarizer_llm))
            if m is not None
        ]
        named += [
            (f"cells[{i}].{CELL_LLM}", cell[CELL_LLM])
            for i, cell in enumerate(self.cells)
            if isinstance(cell.get(CELL_LLM), str)
        ]
        return named

    @property
    def switches(self) -> dict[str, str]:
        """The chat switches of every conversation of the sweep."""
        return {"reply_cleaning": self.reply_cleaning, "speaker_format": self.speaker_format}

    def identity(self) -> dict:
        """What identifies the sweep (its key): the fields, less those added later that are
        still at their defaults, so sweeps created before them keep their keys."""
        data = self.model_dump(mode="json")
        later = (
            ("linked", []),
            ("cells", []),
            ("message_counting", "agent_turns"),
            ("allow_repeat_speaker", False),
            ("fork", None),
            *SWITCH_DEFAULTS.items(),
        )
        for name, default in later:
            if data.get(name) == default:
                data.pop(name, None)
        return data


def expand(
    spec: SweepSpec, experiment: Experiment, experiment_version: str, owner: str | None = None
) -> list[PlannedConversation]:
    """Every conversation of the sweep, in a stable order (cells, then repetitions)."""
    return list(iter_expand(spec, experiment, experiment_version, owner))


def iter_expand(
    spec: SweepSpec, experiment: Experiment, experiment_version: str, owner: str | None = None
) -> Iterator[PlannedConversation]:
    """`expand`, one conversation at a time. A cell's key text is built once: a repetition
    hashes it with its own number and seed filled in (what `conversation_key` hashes)."""
    for cell in _cells(check(spec, experiment), spec):
        cell_key = content_hash(cell.as_dict(), 16)
        keys = CellKeys(experiment_version, cell, spec, owner)
        for repetition in range(1, spec.repetitions + 1):
            seed = None if spec.seed is None else repetition_seed(spec.seed, cell_key, repetition)
            yield PlannedConversation(keys.key(repetition, seed), cell, cell_key, repetition, seed)


def cells(spec: SweepSpec, experiment: Experiment) -> list[Cell]:
    return _cells(design(spec, experiment), spec)


def _cells(d: Design, spec: SweepSpec) -> list[Cell]:
    variant_sets = d.variant_sets()
    found: list[Cell] = []
    seen: set[str] = set()
    for index, base in enumerate(d.listed or [None]):
        assignments = d.assignments
        if base is not None and base.llm is not None:
            assignments = [dict.fromkeys(d.roles, base.llm)]
        agent_sets = [base.agents] if base is not None and base.agents else d.agent_sets
        methods = [base.speaker_method] if base is not None and base.speaker_method else d.methods
        fixed = base.variant if base is not None else {}
        for assignment, days, agents, method, variant in itertools.product(
            assignments, d.day_values, agent_sets, methods, variant_sets
        ):
            role_llms = {r: assignment[r] for r in d.roles}
            manager = assignment.get(MANAGER) or spec.manager_llm
            defaulted = method == "auto" and manager is None
            if defaulted:
                manager = role_llms[d.roles[0]]
            cell = Cell(
                role_llms,
                manager if method == "auto" else None,
                assignment.get(SUMMARIZER) or spec.summarizer_llm,
                days,
                agents,
                method,
                {**fixed, **variant},
                manager_defaulted=defaulted,
            )
            key = content_hash(cell.as_dict(), 16)
            if key in seen:  # two cells would share every conversation key
                raise SweepError(
                    f"cells[{index}]" if base is not None else "sweep",
                    f"makes the cell {cell.label()} twice",
                    fix="name each LLM, variant and cell once (an LLM's label and its model "
                    "string are the same LLM; repetitions repeat a cell)",
                )
            seen.add(key)
            found.append(cell)
    return found


def check(spec: SweepSpec, experiment: Experiment) -> Design:
    """Raise ValueError (a SweepError naming the field) for choices the experiment cannot
    satisfy, or a sweep too large to expand (counted arithmetically before anything is built);
    return the checked design."""
    checked = design(spec, experiment)
    if spec.days * 2 > spec.total_messages and not spec.every_day_count:
        raise SweepError(
            "days",
            f"{spec.days} days need at least {spec.days * 2} messages; got {spec.total_messages}",
            fix="use fewer days or more total_messages",
        )
    return checked


def calls_per_conversation(
    cell: Cell, total_messages: int, message_counting: str = "agent_turns"
) -> int:
    """Expected LLM calls without retries: one per agent turn, one per manager pick, one per
    day (under reference counting each day's opening is one of the messages, not a turn)."""
    turns = total_messages - (cell.days if message_counting == "reference" else 0)
    return turns * (2 if cell.speaker_method == "auto" else 1) + cell.days
