"""Prompt assembly: pure text functions, so a reviewer can re-render any prompt exactly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simulator.worlds.chat.domain.experiment import Experiment, Section
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.prompting.placeholders import resolve


def assemble_sections(sections: Sequence[Section]) -> str:
    """The first section's content opens the prompt; each further one follows as `## Title`."""
    if not sections:
        return ""
    parts = [sections[0].content.strip()]
    for section in sections[1:]:
        parts.append(f"## {section.title}\n{section.content.strip()}")
    return "\n\n".join(part for part in parts if part)


def agent_system_prompt(
    experiment: Experiment,
    role_name: str,
    counts: Mapping[str, int],
    agent_name: str | None = None,
) -> str:
    """A role's system prompt: private sections in order, then the shared ones, resolved.

    With `agent_name`, a line right after the starting prompt tells the agent its own name, so
    Guard_1 knows that the transcript's "Guard_1:" lines are its own."""
    role = experiment.role(role_name)
    sections = [*role.sections, *experiment.shared_sections]
    if agent_name is not None:
        first = sections[0]
        named = f"{first.content.strip()}\n\n{name_line(agent_name)}".strip()
        sections[0] = first.model_copy(update={"content": named})
    return resolve(assemble_sections(sections), experiment, counts)


def name_line(agent_name: str) -> str:
    return f"Your name is {agent_name}."


def example_agent_name(role_name: str) -> str:
    """The name the first agent of a role gets under the default name template (previews)."""
    template = ConversationSpec.model_fields["name_template"].default
    return template.format(role=role_name.replace(" ", "_"), n=1)


def summarizer_system_prompt(experiment: Experiment, counts: Mapping[str, int]) -> str:
    """The summarizer's prompt, assembled like an agent's from its own sections."""
    return resolve(assemble_sections(experiment.summarizer_sections), experiment, counts)


def starting_message(experiment: Experiment, counts: Mapping[str, int]) -> str:
    return resolve(experiment.starting_message, experiment, counts)


def render_all(experiment: Experiment, counts: Mapping[str, int]) -> dict[str, str]:
    """Every prompt of an experiment for given counts, keyed by who receives it (for previews):
    each role's as its first agent receives it under the default names."""
    rendered = {"starting message": starting_message(experiment, counts)}
    for role in experiment.roles:
        rendered[role.name] = agent_system_prompt(
            experiment, role.name, counts, example_agent_name(role.name)
        )
    if experiment.summarizer_sections:
        rendered["summarizer"] = summarizer_system_prompt(experiment, counts)
    return rendered
