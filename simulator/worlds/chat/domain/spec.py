"""A conversation's specification: one run of an experiment with every choice fixed."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from simulator.domain.limits import MAX_AGENTS_PER_ROLE, MAX_SEED
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.vocabulary import SPEAKER_METHODS as SPEAKER_METHODS  # still importable here
from simulator.domain.vocabulary import SpeakerMethod
from simulator.memory.domain.settings import MemorySettings
from simulator.worlds.chat.domain.experiment import Experiment

MessageCounting = Literal["agent_turns", "reference"]
# What the clean text of a reply leaves out (the raw reply is always kept beside it).
# "speakers": where the reply starts speaking for someone else (prompting/bleed.py).
# "speakers_echoes": that, and echoes of the instructions and invented day headers in replies
# and summaries (prompting/echoes.py), which small models write.
# "none": nothing; the raw reply (stripped of surrounding whitespace) is the clean text, as the
# reference tool kept it from 2024-05-30 on (its bleed trimming was commented out then).
ReplyCleaning = Literal["speakers", "speakers_echoes", "none"]
# How the other speakers' turns reach a model (prompting/transcript.py).
# "prefix": one user message per run of others' turns, each line "Name: text".
# "name_field": as autogen's GroupChat sent them: each turn its own user message with the raw
# text and the speaker in the message's `name` field (the researcher's opening too).
SpeakerFormat = Literal["prefix", "name_field"]
MIN_MESSAGES_PER_DAY = 2


class ConversationSpec(BaseModel):
    """Everything that decides what a conversation does; stored whole on its document."""

    model_config = ConfigDict(extra="forbid")

    # role name -> number of agents, bounded like a sweep's (simulator/domain/limits.py)
    agents: dict[str, Annotated[int, Field(ge=1, le=MAX_AGENTS_PER_ROLE)]] = Field(min_length=1)
    total_messages: int = Field(ge=2, le=100_000)
    # "agent_turns": total_messages agent turns. "reference": as the reference tool counted, a
    # day's budget (total // days) includes the day's opening message, so 20 gives 19 turns.
    message_counting: MessageCounting = "agent_turns"
    days: int = Field(default=1, ge=1, le=1000)
    speaker_method: SpeakerMethod = "round_robin"
    # As in the reference (autogen's allow_repeat_speaker=False): no agent speaks twice in a row,
    # under auto and manual too. True lets the manager / the researcher pick the same agent again.
    allow_repeat_speaker: bool = False
    # Each agent's system prompt says its name ("Your name is Guard_1."). Conversations stored
    # before that line existed carry False (migration 003), so a resumed one keeps its prompts.
    agents_know_their_names: bool = True
    reply_cleaning: ReplyCleaning = "speakers"  # left out of the stored spec when "speakers"
    speaker_format: SpeakerFormat = "prefix"  # left out of the stored spec when "prefix"
    role_llms: dict[str, LLMChoice]  # role name -> model for its agents
    manager_llm: LLMChoice | None = None
    summarizer_llm: LLMChoice | None = None
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    name_template: str = Field(default="{role}_{n}", min_length=3, max_length=60)
    variant: dict[str, str] = Field(default_factory=dict)  # section -> chosen variant (sweeps)
    # Every value above that the tool chose because the researcher did not, as one sentence
    # each ("manager_llm: mock:a (not given; the agents' model)"). Printed in the run header.
    defaults_applied: list[str] = Field(default_factory=list)
    # The experiment's memory block with every stream value fixed (MemorySettings.resolved,
    # world_plans=False); the default `summary` is left out of the stored spec, as before.
    memory: MemorySettings = Field(default_factory=MemorySettings)

    @model_serializer(mode="wrap")
    def _without_default_memory(self, handler: SerializerFunctionWrapHandler) -> dict:
        """Defaults added after runs were stored stay out, so stored specs and keys keep."""
        data = handler(self)
        if isinstance(data, dict) and self.memory == MemorySettings():
            data.pop("memory", None)
        if isinstance(data, dict) and self.reply_cleaning == "speakers":
            data.pop("reply_cleaning", None)
        if isinstance(data, dict) and self.speaker_format == "prefix":
            data.pop("speaker_format", None)
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ConversationSpec:
        # Odd totals are allowed: nothing in the engine needs pairs, and 19 agent turns (the
        # paper's transcripts) is an odd count. Either way a day holds at least two messages:
        # under reference counting the day's opening is one of them, as the reference's menu
        # allowed at most total // 2 days.
        if self.days * MIN_MESSAGES_PER_DAY > self.total_messages:
            opening = ", the day's opening included" if self.message_counting == "reference" else ""
            raise ValueError(
                f"{self.days} days need at least {self.days * MIN_MESSAGES_PER_DAY} messages "
                f"({MIN_MESSAGES_PER_DAY} per day{opening}); got {self.total_messages}"
            )
        for role, count in self.agents.items():
            if count < 1:
                raise ValueError(f"role {role!r} needs at least one agent (got {count})")
        if "{n}" not in self.name_template or "{role}" not in self.name_template:
            raise ValueError("name_template must contain {role} and {n}, e.g. '{role}_{n}'")
        if self.speaker_method == "auto" and self.manager_llm is None:
            raise ValueError("speaker_method 'auto' needs a manager_llm")
        if set(self.role_llms) != set(self.agents):
            raise ValueError("role_llms must name a model for exactly the roles in agents")
        self.memory.resolved(world_plans=False)  # memory.planning: a chat has no hours to plan
        return self

    def check_against(self, experiment: Experiment) -> None:
        """Roles must be the experiment's, every one present."""
        names = {r.name for r in experiment.roles}
        unknown = set(self.agents) - names
        if unknown:
            raise ValueError(f"unknown role {sorted(unknown)[0]!r}; the roles are {sorted(names)}")
        missing = names - set(self.agents)
        if missing:
            raise ValueError(f"no agent count for role {sorted(missing)[0]!r}")

    @property
    def day_turns(self) -> list[int]:
        """Agent turns of each day under this spec's counting."""
        return split_messages(self.total_messages, self.days, self.message_counting)

    @property
    def agent_turns(self) -> int:
        """Agent turns of the whole conversation (the openings are not turns)."""
        return sum(self.day_turns)


def split_messages(total: int, days: int, counting: MessageCounting = "agent_turns") -> list[int]:
    """Agent turns per day.

    "agent_turns": `total` turns, as even as possible, earlier days taking the remainder.
    "reference": as the reference tool (autogen's max_round = total // days per day), each day's
    budget is `total // days` (floor: a remainder is dropped) and includes the researcher's
    opening, so a day has `total // days - 1` agent turns: 20 over 1 day gives 19.
    """
    if counting == "reference":
        return [total // days - 1] * days
    base, extra = divmod(total, days)
    return [base + (1 if day < extra else 0) for day in range(days)]
