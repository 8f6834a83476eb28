"""Prompt assembly: pure text functions, so a reviewer can re-render any prompt exactly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simulator.domain.experiment import Experiment, Section
from simulator.prompting.placeholders import resolve


def assemble_sections(sections: Sequence[Section]) -> str:
    """The first section's content opens the prompt; each further one follows as `## Title`."""
    if not sections:
        return ""
    parts = [sections[0].content.strip()]
    for section in sections[1:]:
        parts.append(f"## {section.title}\n{section.content.strip()}")
    return "\n\n".join(part for part in parts if part)


def agent_system_prompt(experiment: Experiment, role_name: str, counts: Mapping[str, int]) -> str:
    """A role's system prompt: private sections in order, then the shared ones, resolved."""
    role = experiment.role(role_name)
    text = assemble_sections([*role.sections, *experiment.shared_sections])
    return resolve(text, experiment, counts)


def summarizer_system_prompt(experiment: Experiment, counts: Mapping[str, int]) -> str:
    """The summarizer's prompt, assembled like an agent's from its own sections."""
    return resolve(assemble_sections(experiment.summarizer_sections), experiment, counts)


def starting_message(experiment: Experiment, counts: Mapping[str, int]) -> str:
    return resolve(experiment.starting_message, experiment, counts)


def render_all(experiment: Experiment, counts: Mapping[str, int]) -> dict[str, str]:
    """Every prompt of an experiment for given counts, keyed by who receives it (for previews)."""
    rendered = {"starting message": starting_message(experiment, counts)}
    for role in experiment.roles:
        rendered[role.name] = agent_system_prompt(experiment, role.name, counts)
    if experiment.summarizer_sections:
        rendered["summarizer"] = summarizer_system_prompt(experiment, counts)
    return rendered
