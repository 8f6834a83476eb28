"""A fork sweep (pure): every conversation of a sweep branches one stored chat at one message
(domain/fork.py), optionally with the researcher's text there, and the sweep varies what may
change from that point: the agents' models, the speaker method, prompt variants, repetitions
and the seed.

What the parent fixed (agents per role, total messages, days, their counting, repeat speakers)
is taken from it: a sweep file may repeat it, but a different value is refused, since the
branches share the parent's first messages. The sweep's spec is filled from the parent before
it is expanded, so the usual machinery (cells, keys, claims, leases) runs it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simulator.domain.ids import content_hash
from simulator.domain.limits import MAX_EDIT_CHARS
from simulator.errors import UserError

if TYPE_CHECKING:
    from simulator.worlds.chat.domain.spec import ConversationSpec
    from simulator.worlds.chat.domain.sweep import Cell, SweepSpec

FIXED = ("total_messages", "days", "message_counting", "allow_repeat_speaker")
GRIDS = {"every_day_count": "days", "every_agent_combination": "agents"}


class ForkBlock(BaseModel):
    """`fork: {from: CONV_ID, at: "1:3", edit: "..."}`; `from` and `at` may come from the flags
    (`--fork-from`, `--fork-at`), since conversation ids are per store."""

    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    parent: str | None = Field(default=None, alias="from", min_length=1, max_length=200)
    at: str | None = Field(default=None, min_length=1, max_length=40)
    edit: str | None = Field(default=None, max_length=MAX_EDIT_CHARS)

    @field_validator("edit")
    @classmethod
    def _edit_says_something(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError(
                "the edited message is empty; give the text the agent says at the fork point, "
                "or leave edit out to let the model speak there again"
            )
        return value


@dataclass(frozen=True)
class ParentSettings:
    """What a fork sweep takes from the conversation it branches (LLMs by their keys)."""

    conversation_id: str
    agents: dict[str, int]
    total_messages: int
    days: int
    message_counting: str
    allow_repeat_speaker: bool
    speaker_method: str
    role_llms: dict[str, str]
    manager_llm: str | None
    summarizer_llm: str | None
    seed: int | None
    variant: dict[str, str]

    @classmethod
    def of(cls, conversation_id: str, spec: ConversationSpec) -> ParentSettings:
        return cls(
            conversation_id,
            dict(spec.agents),
            spec.total_messages,
            spec.days,
            spec.message_counting,
            spec.allow_repeat_speaker,
            spec.speaker_method,
            {role: choice.key for role, choice in spec.role_llms.items()},
            spec.manager_llm.key if spec.manager_llm else None,
            spec.summarizer_llm.key if spec.summarizer_llm else None,
            spec.seed,
            dict(spec.variant),
        )


def _refuse(parent: ParentSettings, field: str, fixed: object, given: object) -> None:
    raise UserError(
        f"this sweep forks {parent.conversation_id}, whose branches share its first messages, "
        f"so {field} is the parent's ({fixed}); the sweep gives {given}",
        field=field,
        fix=f"leave {field} out of a fork sweep (the parent's is used), or create a sweep "
        "without fork: (and without --fork-from) to vary it",
    )


def refuse_changes(
    spec: SweepSpec, parent: ParentSettings, counts: dict[str, dict[str, int]]
) -> None:
    """A UserError naming the first field the sweep sets differently from the parent.
    `counts`: the agents per role the sweep gives, canonical (`agents`, `cells[i].agents`)."""
    given = spec.model_fields_set
    for name, what in GRIDS.items():
        if getattr(spec, name):
            fixed = _agents(parent.agents) if what == "agents" else parent.days
            raise UserError(
                f"this sweep forks {parent.conversation_id}, whose branches continue its "
                f"conversation with its {what} ({fixed}); {name} "
                f"would vary the {what}",
                field=name,
                fix=f"leave {name} out of a fork sweep, or create a sweep without fork: (and "
                f"without --fork-from) to vary the {what}",
            )
    for name in FIXED:
        value = getattr(spec, name)
        if name in given and value is not None and value != getattr(parent, name):
            _refuse(parent, name, _shown(getattr(parent, name)), _shown(value))
    for where, agents in counts.items():
        if agents != parent.agents:
            _refuse(parent, where, _agents(parent.agents), _agents(agents))
    if "speaker_methods" not in given and parent.speaker_method == "manual":
        raise UserError(
            f"{parent.conversation_id} chose its speakers by hand (manual), and a sweep runs "
            "unattended",
            field="speaker_methods",
            fix="give the fork sweep speaker_methods (round_robin, random, role_alternating or "
            "auto), e.g. --speaker round_robin",
        )


def from_parent(spec: SweepSpec, parent: ParentSettings, fork: ForkBlock) -> tuple[dict, list[str]]:
    """The sweep's fields filled from the parent (to validate as the sweep's spec), and a
    sentence for every value taken from it."""
    data = spec.model_dump(mode="json")
    data["fork"] = fork.model_dump(mode="json")
    pid = parent.conversation_id
    data.update({name: getattr(parent, name) for name in FIXED})
    data["agents"] = dict(parent.agents)
    notes = [
        f"from the parent {pid}: agents {_agents(parent.agents)}, total_messages "
        f"{parent.total_messages} ({parent.message_counting}), days {parent.days}, "
        f"allow_repeat_speaker {_shown(parent.allow_repeat_speaker)}"
    ]
    given = spec.model_fields_set
    if "name" not in given:
        data["name"] = f"fork of {pid} at {fork.at}"
    # an assignment that names a summarizer or manager keeps it; the others get the parent's
    assigned = {name.lower() for a in spec.llm_assignments for name in a}
    where = lambda name: "where not given" if name in assigned else "not given"  # noqa: E731
    if not spec.llms and not spec.llm_assignments:
        keys = list(dict.fromkeys(parent.role_llms.values()))
        if len(keys) == 1:
            data["llms"] = keys
        else:
            data["llm_assignments"] = [dict(parent.role_llms)]
        models = ", ".join(f"{r}: {k}" for r, k in parent.role_llms.items())
        notes.append(f"agents' models: the parent's ({models}) (not given)")
    if "speaker_methods" not in given:
        data["speaker_methods"] = [parent.speaker_method]
        notes.append(f"speaker method: {parent.speaker_method} (not given; the parent's)")
    if spec.summarizer_llm is None and parent.summarizer_llm:
        data["summarizer_llm"] = parent.summarizer_llm
        notes.append(
            f"summarizer_llm: {parent.summarizer_llm} ({where('summarizer')}; the parent's)"
        )
    methods = set(data["speaker_methods"]) | {
        c.get("speaker_method") for c in spec.cells if isinstance(c, dict)
    }
    if spec.manager_llm is None and parent.manager_llm:
        data["manager_llm"] = parent.manager_llm
        if "auto" in methods:
            notes.append(f"manager_llm: {parent.manager_llm} ({where('manager')}; the parent's)")
    if "seed" not in given and parent.seed is not None:
        data["seed"] = parent.seed
        notes.append(
            f"seed: {parent.seed} (not given; the parent's): repetition r runs with seed "
            f"{parent.seed} + r - 1 in every cell"
        )
    elif data.get("seed") is None:
        notes.append("seed: none (the parent had none; branches are not reproducible)")
    if parent.variant:
        shown = ", ".join(f"{k}={v}" for k, v in parent.variant.items())
        notes.append(f"variants: the parent's ({shown}) where the sweep varies none")
    return data, notes


def paired_seed(base: int | None, repetition: int) -> int | None:
    """A branch's seed: the same for repetition r in every cell (base + r - 1, as `conversation
    fork` numbers its continuations), so the models' branches pair by repetition instead of
    each cell drawing seeds of its own; None when the sweep has no seed."""
    return None if base is None else (base + repetition - 1) % 2**32


def branch_key(key: str, fork: ForkBlock) -> str:
    """A branch's conversation key: the sweep's key (experiment version, cell, repetition,
    seed, owner) and where it branches (parent, point, edit), so two fork sweeps share a
    conversation only when both would run it identically."""
    return "k_" + content_hash(
        {"k": key, "fork": {"of": fork.parent, "at": fork.at, "edit": fork.edit}}, 24
    )


def calls_per_branch(cell: Cell, turns_left: int, days_left: int, edited: bool) -> int:
    """Expected LLM calls without retries: the continuation's turns (an edited one calls no
    model), a manager pick per turn under auto, and the summaries of the fork's day and after."""
    turns = turns_left - (1 if edited else 0)
    return turns * (2 if cell.speaker_method == "auto" else 1) + days_left


def headline(parent_id: str, at: str, edited: bool, branches: int) -> str:
    """'fork sweep from conv_x at 1:3, with an edit: 6 branches'."""
    return (
        f"fork sweep from {parent_id} at {at}{', with an edit' if edited else ''}: "
        f"{branches:,} branch{'' if branches == 1 else 'es'}"
    )


def _agents(agents: dict[str, int]) -> str:
    return ", ".join(f"{role}={n}" for role, n in agents.items())


def _shown(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
