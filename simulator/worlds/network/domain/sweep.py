"""A sweep of an opinion-network experiment: models x graphs x scenarios x tables x rounds x
seeds, expanded into runs, with a theory twin per cell (pure).

Each axis left out keeps the experiment's value. `theory: true` (the default) adds "theory" to
the model axis: for every graph, scenario, table, rounds and seed, one run of the coevolution
theory beside the LLM runs, so each has its twin in the measures and the report. Seeds: a
`seeds` list is an axis (each seed seeds the sampling and the theory's updates; the graph's
own seed is part of its spec); without it, `repetitions` runs per cell get seeds `seed`,
`seed + 1`, ... (none when no `seed` is given: LLM sampling is then not reproducible and each
theory run draws and stores its own, so twins pair by settings rather than by seed).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from simulator.domain.ids import content_hash
from simulator.domain.llm_choice import Name
from simulator.domain.world_sweep import PlannedRun, SweepSeeds, expand_cells
from simulator.worlds.network.domain.agents_table import MAX_AGENT_ROWS
from simulator.worlds.network.domain.experiment import THEORY, NetworkExperiment
from simulator.worlds.network.domain.graphs import parse_graph_spec
from simulator.worlds.network.domain.scenario import MAX_ROUNDS

Rounds = Annotated[int, Field(ge=1, le=MAX_ROUNDS)]
Text = Annotated[str, Field(min_length=1, max_length=1000)]
AXES = ("llm", "graph", "scenario", "agents", "rounds")  # the order of a cell's label


class NetworkSweepSpec(SweepSeeds):
    """What to vary in a network experiment."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["network"] = "network"
    name: Name = Field(default="network sweep", min_length=1, max_length=120)
    llms: list[str] = Field(default_factory=list, max_length=100)
    graphs: list[dict[str, Any]] = Field(default_factory=list, max_length=1000)
    scenarios: list[Text] = Field(default_factory=list, max_length=100)
    agents: list[Text] = Field(default_factory=list, max_length=100)
    rounds: list[Rounds] = Field(default_factory=list, max_length=100)
    # blocks of consecutive table rows (group g: rows g*n+1..(g+1)*n for n nodes), the
    # reference's design: each group plays every seed
    groups: list[Annotated[int, Field(ge=0, le=MAX_AGENT_ROWS)]] = Field(
        default_factory=list, max_length=MAX_AGENT_ROWS
    )
    theory: bool = True

    @field_validator("graphs")
    @classmethod
    def _graphs(cls, graphs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, graph in enumerate(graphs):
            parse_graph_spec(graph, f"sweep.graphs[{i}]")  # a UserError names the field
        return graphs

    @model_validator(mode="after")
    def _consistent(self) -> NetworkSweepSpec:
        if THEORY in self.llms:
            raise ValueError(
                "llms lists 'theory': the theory twins come from `theory: true` (the default)"
            )
        keys = [content_hash(g, 16) for g in self.graphs]
        if len(set(keys)) != len(keys):
            raise ValueError("graphs lists a network twice; list each once")
        self.check_sweep(("llms", "scenarios", "agents", "rounds", "groups"))
        return self

    def size(self, llms: int) -> int:
        models = max(len(self.llms), llms) + int(self.theory)
        cells = models * max(len(self.graphs), 1) * max(len(self.scenarios), 1)
        cells *= max(len(self.agents), 1) * max(len(self.rounds), 1) * max(len(self.groups), 1)
        return cells * self.runs_per_cell()


def graph_label(graph: dict[str, Any]) -> str:
    """A short name for a graph spec: its type and parameters, e.g. barabasi_albert(n=50,m=5)."""
    params = ",".join(
        f"{k}={v}" for k, v in graph.items() if k != "type" and not isinstance(v, list | dict)
    )
    return f"{graph.get('type')}({params})"


@dataclass(frozen=True)
class NetworkCell:
    llm: str  # a model string, or "theory"
    graph: dict[str, Any]
    scenario: str
    agents: str
    rounds: int
    group: int | None = None  # None: the experiment's (a sweep without `groups`)

    @property
    def is_theory(self) -> bool:
        return self.llm == THEORY

    def as_dict(self) -> dict:
        """The cell's values; `group` only when the sweep names groups, so the cells (and
        keys) of every sweep stored before it existed stay as they were."""
        data = {
            "llm": self.llm,
            "graph": self.graph,
            "scenario": self.scenario,
            "agents": self.agents,
            "rounds": self.rounds,
        }
        if self.group is not None:
            data["group"] = self.group
        return data

    def label(self) -> str:
        group = "" if self.group is None else f" group={self.group}"
        return (
            f"llm={self.llm} graph={graph_label(self.graph)} scenario={self.scenario} "
            f"agents={self.agents}{group} rounds={self.rounds}"
        )

    def settings(self) -> dict[str, Any]:
        """The network settings this cell puts over the experiment's."""
        return {
            "graph": self.graph,
            "scenario": self.scenario,
            "agents": self.agents,
            "rounds": self.rounds,
            "group": self.group,
        }


def cells(spec: NetworkSweepSpec, experiment: NetworkExperiment) -> list[NetworkCell]:
    net = experiment.network
    models = (spec.llms or [experiment.llms[0].key]) + ([THEORY] if spec.theory else [])
    return [
        NetworkCell(llm, graph, scenario, agents, rounds, group)
        for llm, graph, scenario, agents, group, rounds in itertools.product(
            models,
            spec.graphs or [net.graph],
            spec.scenarios or [net.scenario],
            spec.agents or [net.agents],
            spec.groups or [None],
            spec.rounds or [net.rounds],
        )
    ]


def expand(
    spec: NetworkSweepSpec, experiment: NetworkExperiment, version: str, owner: str
) -> list[PlannedRun]:
    """Every run, cell by cell; a cell's runs in seed order."""
    return expand_cells(cells(spec, experiment), spec.run_seeds(), version, owner, "n_")
