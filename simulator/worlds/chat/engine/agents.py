"""Agents of one conversation: unique names, their role and their model."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.domain.llm_choice import LLMChoice
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import ConversationSpec


@dataclass(frozen=True)
class Agent:
    name: str
    role: str
    llm: LLMChoice


def build_agents(experiment: Experiment, spec: ConversationSpec) -> list[Agent]:
    """Agents in role order (the experiment's), numbered from 1 within each role."""
    agents: list[Agent] = []
    for role in experiment.roles:
        for n in range(1, spec.agents[role.name] + 1):
            name = spec.name_template.format(role=role.name.replace(" ", "_"), n=n)
            agents.append(Agent(name, role.name, spec.role_llms[role.name]))
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"name_template {spec.name_template!r} gives duplicate agent names")
    return agents
