"""The group chat's agents by role: `guard=2,prisoner=1` read against the experiment's roles
(`llm-sim run --agents`, `sweep create --agents`, `experiment show --render`), and the prompts
those agents read."""

from __future__ import annotations

from simulator.domain.limits import MAX_AGENTS_PER_ROLE
from simulator.errors import UserError
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.prompting.assembly import render_all


def parse_counts(text: str, experiment: Experiment, field: str = "--render") -> dict[str, int]:
    """'guard=2,prisoner=1' -> {'Guard': 2, 'Prisoner': 1}; roles known and named once, counts
    written in ASCII digits from 1 to MAX_AGENTS_PER_ROLE. Roles not named get one agent."""
    example = ",".join(f"{r.name.lower()}=1" for r in experiment.roles)
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise UserError(
            f"{text!r} names no role", field=field, fix=f"write ROLE=COUNT pairs, e.g. {example}"
        )
    counts: dict[str, int] = {}
    for part in parts:
        if not part:
            raise UserError(
                f"{text!r} has an empty entry between commas",
                field=field,
                fix=f"remove the extra comma, e.g. {example}",
            )
        name, sep, value = part.partition("=")
        try:
            role = experiment.role(name)
        except KeyError as exc:
            raise UserError(
                str(exc.args[0]),
                field=field,
                fix=f"use ROLE=COUNT with the experiment's role names, e.g. {example}",
            ) from None
        value = value.strip()
        if role.name in counts:
            raise UserError(
                f"role {role.name!r} is given twice",
                field=field,
                fix=f"give each role once, e.g. {example}",
            )
        whole = sep and value.isascii() and value.isdigit() and len(value) <= 6
        if not whole or not 1 <= int(value) <= MAX_AGENTS_PER_ROLE:
            raise UserError(
                f"{part!r} needs a whole number of agents from 1 to {MAX_AGENTS_PER_ROLE}",
                field=field,
                fix=f"write e.g. {role.name.lower()}=1",
            )
        counts[role.name] = int(value)
    for role in experiment.roles:
        counts.setdefault(role.name, 1)
    return counts


def render(experiment: Experiment, counts: dict[str, int]) -> dict[str, str]:
    """Every prompt of the experiment as the agents of `counts` read them."""
    return render_all(experiment, counts)
