"""An opinion-network experiment (`kind: network`, LLM-SAM) and one run's fixed choices. Pure data.

The experiment names its parts (a graph spec, an agents table, a scenario, the rounds); a run
(`NetworkSpec`) holds them resolved: the table's rows, the scenario's texts and every
snapshot's edges, so a stored run replays the same prompts after the files change or vanish.

`memory:` says what an agent carries between rounds (engine/network_memory.py): `summary` (the
default, the world's own: every earlier answer of its own, as before memory blocks existed),
`stream` (a Generative-Agents memory stream recalled into a "What you remember" section) or
`none` (no earlier answer of its own; its friends' answers of the round before are still
shown). The network has no simulated hours, so it makes no daily plans: `planning: true` is
refused where the experiment is read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from simulator.domain.limits import MAX_SEED
from simulator.domain.llm_choice import LLMChoice, WorldExperiment
from simulator.errors import UserError
from simulator.memory.domain.settings import MemorySettings
from simulator.worlds.network.domain.agents_table import MAX_AGENT_ROWS, AgentRow
from simulator.worlds.network.domain.graphs import parse_graph_spec
from simulator.worlds.network.domain.prompt_choices import PromptChoices, PromptSwitches
from simulator.worlds.network.domain.scenario import MAX_ROUNDS, Scenario

NETWORK_KIND = "network"
# what a stored network experiment keeps under `spec` (memory only when not the default: the
# store leaves later fields at their default out, so older experiments keep their version)
NETWORK_FIELDS = ("llms", "network", "memory")
SYNTHETIC_TABLE = "synthetic"  # the shipped table, prompts/network/agents_synthetic.csv
ANSWER_PURPOSES = ("opinion", "opinion_retry_2", "opinion_retry_3")  # one per attempt
THEORY = "theory"  # a run of the coevolution theory instead of a model (`--theory`)


# switches added after theory runs were stored: at their default they stay out of a stored
# dump, so an older experiment keeps its spec and version (store/repositories/experiments.py)
THEORY_LATER_FIELDS = ("opinion_weight", "communication", "communication_degree", "stubborn")


class TheorySettings(BaseModel):
    """The coevolution theory's own parameters (domain/network/theory.py); only a theory run
    (`llm-sim run EXP --theory`) reads them. Each default is printed in that run's header."""

    model_config = ConfigDict(extra="forbid")

    alpha: float = Field(default=0.0, ge=-1.0, le=1.0)  # Yes's advantage (a cost: below 0)
    mu: float = Field(default=0.0, ge=0.0, le=1.0)  # weight of friends' actions in opinions
    rationality: float | None = Field(default=None, ge=0.0, le=1e6)  # None: best response
    updates_per_round: int | None = Field(default=None, ge=1, le=10_000_000)  # random: None: n
    information: list[Annotated[float, Field(ge=-1.0, le=1.0)]] = Field(
        default_factory=list, max_length=MAX_ROUNDS
    )  # u(t) for rounds 1, 2, ...; empty: no outside information
    opinion_weight: float = Field(default=0.5, ge=0.0, le=1.0)  # ZYC's lambda
    communication: Literal["A/d", "rrg_walk"] = "A/d"  # who weighs whose opinion (W)
    communication_degree: int = Field(default=4, ge=1, le=1000)  # k of rrg_walk's RRG(n, k)
    stubborn: int = Field(default=0, ge=0, le=1_000_000)  # innovators: the table's first s
    # "sweep": every agent once a round in a random order; "random": updates_per_round draws
    schedule: Literal["sweep", "random"] = "sweep"

    @model_validator(mode="before")
    @classmethod
    def _counted_rounds_are_random(cls, data: Any) -> Any:
        """A count of updates per round is the random clock's: a stored experiment that gave
        one before `schedule` existed keeps the schedule it ran with."""
        if isinstance(data, dict) and data.get("updates_per_round") is not None:
            data = {"schedule": "random", **data}
        return data

    @model_validator(mode="after")
    def _per_round_needs_random(self) -> TheorySettings:
        if self.schedule == "sweep" and self.updates_per_round is not None:
            raise ValueError(
                "network.theory.updates_per_round counts the random schedule's updates; a "
                "sweep updates every agent once a round: drop it, or set schedule: random"
            )
        return self

    @model_serializer(mode="wrap")
    def _later_fields_at_default_left_out(self, handler: Any) -> dict:
        dumped = handler(self)
        for name in THEORY_LATER_FIELDS:
            if name in dumped and getattr(self, name) == type(self).model_fields[name].default:
                del dumped[name]
        if "schedule" in dumped and dumped["schedule"] == (
            "sweep" if self.updates_per_round is None else "random"
        ):
            del dumped["schedule"]  # what reading it back infers
        return dumped

    def full(self) -> dict:
        """Every parameter, the switches at their default too: what a theory run stores, so
        a run says exactly what it played (an experiment's spec leaves them out)."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    def described(self, agents: int, rounds: int) -> list[str]:
        """One phrase per parameter, in field order."""
        info = (
            "outside information u(t) " + ", ".join(f"{u:g}" for u in self.information)
            if self.information
            else "no outside information (network.theory.information not given)"
        )
        if self.information and len(self.information) < rounds:
            info += f"; rounds after {len(self.information)} hear none"
        if len(self.information) > rounds:
            info += f"; the values after round {rounds} are not used"
        rationality = (
            "infinite (best response)" if self.rationality is None else f"{self.rationality:g}"
        )
        movers = max(agents - self.stubborn, 0)
        if self.schedule == "sweep":
            per_round = f"{movers:,} updates per round (each agent once)"
            schedule = "schedule sweep (every agent updates once a round, in a random order)"
        else:
            count = self.updates_per_round or agents
            per_round = f"{count:,} updates per round" + (
                "" if self.updates_per_round else " (one per agent on average)"
            )
            schedule = "schedule random (agents drawn at random, asynchronous, as CAOf.m)"
        walk = self.communication == "rrg_walk"
        return [
            f"alpha {self.alpha:g}",
            f"mu {self.mu:g}",
            f"rationality {rationality}",
            per_round,
            info,
            f"opinion weight {self.opinion_weight:g} (ZYC's lambda; the table's lambda is the "
            "cost: Yes leans on opinion O above lambda)",
            "communication "
            + (
                "rrg_walk (W: a random walk on a random regular graph)"
                if walk
                else "A/d (W: each friend's opinion over the friend count)"
            ),
            f"communication degree {self.communication_degree}"
            + ("" if walk else " (unused: communication A/d)"),
            f"stubborn innovators {self.stubborn}"
            + (
                f" (the table's first {self.stubborn}: always Yes, opinion 10)"
                if self.stubborn
                else ""
            ),
            schedule,
        ]


def check_theory(theory: TheorySettings, agents: int) -> None:
    """The switches that depend on the number of agents: checked where a theory run is
    planned, since a flag or a sweep may change the graph after the experiment was written."""
    if theory.stubborn >= agents:
        raise UserError(
            f"{theory.stubborn} stubborn innovators leave none of the {agents} agents to update",
            field="network.theory.stubborn",
            fix=f"give 0..{agents - 1} stubborn innovators (the table's first rows)",
        )
    k = theory.communication_degree
    if theory.communication == "rrg_walk" and (k >= agents or agents * k % 2):
        raise UserError(
            f"no random {k}-regular graph on {agents} nodes exists (it needs k < n and n x k even)",
            field="network.theory.communication_degree",
            fix="choose a degree below the number of agents whose product with it is even "
            "(4, the reference's, fits any graph of 5 or more nodes)",
        )


class NetworkSettings(BaseModel):
    """What a sweep may vary and a run fixes: the graph, the agents, the story, the rounds."""

    model_config = ConfigDict(extra="forbid")

    graph: dict[str, Any] = Field(
        default_factory=lambda: {"type": "barabasi_albert", "n": 50, "m": 5, "seed": 1}
    )
    agents: str = Field(default=SYNTHETIC_TABLE, min_length=1, max_length=1000)
    scenario: str = Field(default="costly_purchase", min_length=1, max_length=1000)
    rounds: int = Field(default=2, ge=1, le=MAX_ROUNDS)  # the scenarios: 3 questions
    theory: TheorySettings = Field(default_factory=TheorySettings)
    # rounds t >= 1 before whose answers every agent messages its friends (engine/network_run.py);
    # build_spec checks them against `rounds`, which a flag or a sweep may change
    free_chat: list[Annotated[int, Field(ge=1, le=MAX_ROUNDS)]] = Field(
        default_factory=list, max_length=MAX_ROUNDS
    )
    # how the prompts are put together (domain/network/prompt_choices.py)
    prompts: PromptChoices = Field(default_factory=PromptChoices)
    # which block of consecutive table rows plays (block g: rows g*n .. g*n+n-1 for n nodes,
    # the reference's groups); None: the table's first n rows, as runs before it had
    group: int | None = Field(default=None, ge=0, le=MAX_AGENT_ROWS)

    @model_serializer(mode="wrap")
    def _without_unset_later_fields(self, handler: Any) -> dict:
        """`prompts` at its default and `group` unset stay out of the dump, so every run and
        experiment stored before they existed dumps (and hashes) as it did."""
        data = handler(self)
        if self.prompts.is_default:
            data.pop("prompts", None)
        if self.group is None:
            data.pop("group", None)
        return data

    @field_validator("graph")
    @classmethod
    def _graph(cls, value: dict[str, Any]) -> dict[str, Any]:
        parse_graph_spec(value, "network.graph")  # a UserError names the field and the fix
        return value


def check_free_chat(chosen: NetworkSettings) -> None:
    """Free-chat rounds exist and are named once: a round past the last would never chat, and
    `--rounds` or a sweep can shorten a run after the experiment was written. Checked where an
    experiment file is read and where a run is planned (not on every stored read, so an older
    experiment stays readable)."""
    seen: set[int] = set()
    for t in chosen.free_chat:
        if not 1 <= t <= chosen.rounds or t in seen:
            last = "round 1" if chosen.rounds == 1 else f"rounds 1..{chosen.rounds}"
            problem = "is named twice" if t in seen else f"is not one of the run's {last}"
            raise UserError(
                f"free-chat round {t} {problem}",
                field="network.free_chat",
                fix=f"list each free-chat round once, within 1..{chosen.rounds} (the rounds "
                "after round 0), or raise network.rounds",
            )
        seen.add(t)


class NetworkExperiment(WorldExperiment):
    """Agents with a survey participant's coefficients deciding on a social network."""

    kind: Literal["network"] = NETWORK_KIND
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)

    @field_validator("memory")
    @classmethod
    def _no_plans(cls, value: MemorySettings) -> MemorySettings:
        value.resolved(world_plans=False)  # ValueError naming memory.planning
        return value


class AgentRecord(BaseModel):
    """One row of the agents table as a run stores it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    a: float
    tau: float
    f: float
    lam: float
    opinion: float
    action: int
    text: str

    @classmethod
    def of(cls, row: AgentRow) -> AgentRecord:
        return cls(
            name=row.name,
            a=row.a,
            tau=row.tau,
            f=row.f,
            lam=row.lam,
            opinion=row.opinion,
            action=row.action,
            text=row.text,
        )

    def row(self) -> AgentRow:
        return AgentRow(**self.model_dump())


class NetworkSpec(BaseModel):
    """One network run with everything resolved; stored whole on its run document."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["network"] = NETWORK_KIND
    settings: NetworkSettings
    agents: list[AgentRecord] = Field(min_length=1)
    scenario: Scenario
    snapshots: list[list[tuple[int, int]]] = Field(min_length=1)  # edges, self-loops included
    model: Literal["llm", "theory"] = "llm"  # who answers: the LLM, or the theory (no calls)
    llm: LLMChoice | None = None
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    defaults_applied: list[str] = Field(default_factory=list)
    memory: MemorySettings = Field(default_factory=MemorySettings)  # resolved: no value unset

    @model_validator(mode="after")
    def _edges_name_agents(self) -> NetworkSpec:
        if (self.llm is None) != self.is_theory:
            raise ValueError("an LLM run names its llm; a theory run has none")
        if self.is_theory and self.seed is None:
            raise ValueError("a theory run stores its seed, so it can be replayed")
        n = len(self.agents)
        for t, edges in enumerate(self.snapshots):
            for u, v in edges:
                if not (0 <= u < n and 0 <= v < n):
                    raise ValueError(f"snapshot {t} has edge ({u}, {v}) outside 0..{n - 1}")
        return self

    @property
    def names(self) -> list[str]:
        return [agent.name for agent in self.agents]

    @property
    def rounds(self) -> int:
        return self.settings.rounds

    @property
    def is_theory(self) -> bool:
        return self.model == THEORY

    @property
    def switches(self) -> PromptSwitches:
        return self.settings.prompts.resolved()

    @property
    def calls(self) -> int:
        """LLM calls when every answer parses at the first try: one per agent per round, and
        one message per agent in each free-chat round (none for the theory); a memory stream
        adds its own (ratings, reflections), which no plan can count."""
        messages = self.switches.free_chat_as == "message"
        rounds = self.rounds + (len(self.settings.free_chat) if messages else 0)
        return 0 if self.is_theory else len(self.agents) * rounds


def is_network(data: dict | None) -> bool:
    """Whether a stored experiment, spec or run document is an opinion-network one."""
    return bool(data) and data.get("kind") == NETWORK_KIND
