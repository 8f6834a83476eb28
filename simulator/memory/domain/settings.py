"""What an experiment's agents remember between steps: the `memory:` block. Pure data.

`kind` picks the memory: `summary` (the world's own: the grid's rolling self-summary, written
by the model each step; the default, so every experiment stored before memory streams runs as
it did), `stream` (Park et al.'s memory stream: every observation a record rated for
importance, embedded, retrieved by recency, importance and relevance into the prompt, with
reflections when the summed importance passes the threshold), or `none` (nothing carried: the
paper's "no memory" ablation). Each stream setting left unset is noted, with the value used,
in the run header and on the stored spec (`notes`), so a reader knows what decided the run.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from simulator.memory.domain.embedder_strings import DEFAULT_EMBEDDER, parse_embedder
from simulator.memory.domain.records import MemoryType
from simulator.memory.domain.reflection import PAPER_REFLECTION, REFERENCE_REFLECTION
from simulator.memory.domain.retrieval import (
    PRESETS,
    REFERENCE,
    Candidates,
    RankOrder,
    RecencyMode,
    RetrievalSettings,
)

MemoryKind = Literal["summary", "stream", "none"]
ReactRule = Literal["every_step", "importance_at_least"]
DEFAULT_MINUTES_PER_STEP = 10
DAY_START_HOUR = 8  # simulated minute 0 is 08:00 of day 1; plans run from here to PLAN_END
PLAN_END_HOUR = 22
# planning keys a spec stores only when set; a stored spec without them ran with two plan
# levels and asked for a reaction only at importance 7 (LEGACY_*), so it resumes that way
PLANNING_KEYS = ("plan_levels", "react", "react_importance", "talk", "talk_turns")
LEGACY_PLAN_LEVELS, LEGACY_REACT_IMPORTANCE = 2, 7
# the reference code's agent_chat_v2 (converse.py): at most 8 rounds of two lines each
CODE_TALK_TURNS = 16
# retrieval keys a spec stores only when set; a reference spec stored without them ranked from
# the most recent access over every record (LEGACY_REFERENCE), so it resumes that way
RETRIEVAL_KEYS = ("weights", "recency_decay", "recency", "rank_order", "candidates")
LEGACY_REFERENCE = REFERENCE.model_copy(update={"rank_order": "newest_first", "candidates": "all"})
REFLECTION_THRESHOLDS = {
    "paper": PAPER_REFLECTION.threshold,
    "reference": REFERENCE_REFLECTION.threshold,
}
# the paper's ablation as a sweep factor: the memory block each level runs with
ABLATIONS: dict[str, dict] = {
    "full": {"kind": "stream", "reflection": True, "planning": True},
    "no_reflection": {"kind": "stream", "reflection": False, "planning": True},
    "no_reflection_no_planning": {"kind": "stream", "reflection": False, "planning": False},
    "no_memory": {"kind": "none"},
    "summary": {"kind": "summary"},  # the grid's own rolling self-summary, as a baseline
}


class RetrievalWeights(BaseModel):
    """`memory.weights`: how much each scaled term counts; one left out is the preset's."""

    model_config = ConfigDict(extra="forbid")

    recency: float | None = Field(default=None, ge=0, le=1000)
    importance: float | None = Field(default=None, ge=0, le=1000)
    relevance: float | None = Field(default=None, ge=0, le=1000)

    @model_serializer(mode="wrap")
    def _without_unset(self, handler: Any) -> dict:
        return {k: v for k, v in handler(self).items() if v is not None}

    def filled(self, preset: RetrievalSettings) -> RetrievalWeights:
        """Every weight set: the given ones, the preset's for the rest."""
        return RetrievalWeights(
            recency=_given(self.recency, preset.recency_weight),
            importance=_given(self.importance, preset.importance_weight),
            relevance=_given(self.relevance, preset.relevance_weight),
        )

    def described(self) -> str:
        return (
            f"{{recency: {self.recency:g}, importance: {self.importance:g}, "
            f"relevance: {self.relevance:g}}}"
        )


class MemorySettings(BaseModel):
    """The `memory:` block of an experiment, and of a run's spec once every value is fixed."""

    model_config = ConfigDict(extra="forbid")

    kind: MemoryKind = "summary"
    retrieval: Literal["paper", "reference"] | None = None  # weights, decay and top k
    top_k: int | None = Field(default=None, ge=1, le=1000)
    reflection: bool | None = None
    planning: bool | None = None  # a daily plan, decomposed to hours, shown as {plan}
    reflection_threshold: int | None = Field(default=None, ge=1, le=100_000)
    embedder: str | None = Field(default=None, min_length=1, max_length=300)
    minutes_per_step: int | None = Field(default=None, ge=1, le=24 * 60)
    # the chat's only: with a stream, whether later days still open with the day summaries
    # (true: the stream beside them, the default; false: the stream instead of them)
    day_summaries: bool | None = None
    # planning and reacting (Park et al. 4.3); unset, a spec resolved before these keys existed
    # runs as it did (see PLANNING_KEYS), and a new run's spec stores each value resolved
    plan_levels: Literal[2, 3] | None = None  # 3: hour blocks decomposed into 5-15-minute actions
    react: ReactRule | None = None  # every_step: a focal perception each step, as the code
    react_importance: int | None = Field(default=None, ge=1, le=10)  # importance_at_least's
    talk: bool | None = None  # a reaction may start a conversation with the one perceived
    talk_turns: int | None = Field(default=None, ge=1, le=100)  # most lines of a conversation
    # retrieval over the `retrieval` preset, each given key overriding it (see retrieval.py);
    # unset, a spec resolved before these keys existed runs as it did (see RETRIEVAL_KEYS)
    weights: RetrievalWeights | None = None
    recency_decay: float | None = Field(default=None, gt=0, le=1)
    recency: RecencyMode | None = None  # hours since last access, or rank by last access
    rank_order: RankOrder | None = None  # rank 1: the oldest access (the code) or the newest
    candidates: Candidates | None = None  # all records, or the code's events and thoughts

    @field_validator("rank_order")
    @classmethod
    def _rank_order_needs_rank(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A rank order decides something only when recency is by rank."""
        recency = info.data.get("recency") or PRESETS[info.data.get("retrieval") or "paper"].recency
        if value is not None and recency != "rank":
            raise ValueError(
                f"memory.rank_order orders the ranks of recency by rank, and recency here is "
                f"by {recency} since last access; add recency: rank or leave rank_order out"
            )
        return value

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Checked when the experiment is read, not when a run reaches its first memory."""
        if value is not None:
            parse_embedder(value, stored=bool(info.context and info.context.get("stored")))
        return value

    @model_serializer(mode="wrap")
    def _without_unset_day_summaries(self, handler: Any) -> dict:
        """Left unset, `day_summaries` stays out of the dump, so every block stored before it
        existed (and every experiment version hashing one) dumps as it did."""
        data = handler(self)
        if self.day_summaries is None:
            data.pop("day_summaries", None)
        for key in PLANNING_KEYS + RETRIEVAL_KEYS:  # likewise: unset, left out
            if getattr(self, key) is None:
                data.pop(key, None)
        return data

    @property
    def is_stream(self) -> bool:
        return self.kind == "stream"

    def resolved(self, world_plans: bool = True) -> tuple[MemorySettings, list[str]]:
        """Every unset stream value that decides something filled with its default, and a note
        for each one filled (a threshold is left unset when reflection is off). A world without
        simulated hours to plan (`world_plans` False: the chat, the network) plans nothing, and
        a block asking it to is refused (ValueError naming memory.planning)."""
        if not self.is_stream:
            return self, []
        if not world_plans and self.planning:
            raise ValueError(
                "memory.planning: this world has no simulated hours to plan, so daily plans "
                "are made only in grid worlds; leave planning out or set it to false"
            )
        asked = [k for k in PLANNING_KEYS if getattr(self, k) is not None]
        if not world_plans and asked:
            raise ValueError(
                f"memory.planning: this world has no simulated hours to plan, so memory.{asked[0]} "
                "(plans, reactions and talks) applies only in grid worlds; leave it out"
            )
        preset = self.retrieval or "paper"
        defaults = {
            "retrieval": preset,
            "top_k": PRESETS[preset].top_k,
            "reflection": True,
            "planning": world_plans,
            "reflection_threshold": REFLECTION_THRESHOLDS[preset],
            "embedder": DEFAULT_EMBEDDER,
            "minutes_per_step": DEFAULT_MINUTES_PER_STEP,
        }
        if self.reflection is False:  # no reflection: its threshold decides nothing
            del defaults["reflection_threshold"]
        if self.planning is not False and world_plans:
            defaults.update(self._planning_defaults())
        defaults.update(self._retrieval_defaults(preset))
        filled = {k: v for k, v in defaults.items() if getattr(self, k) is None}
        notes = [f"memory.{k}: {_yaml(v)} (not given)" for k, v in filled.items()]
        if self.weights is not None:  # some weights given: the rest filled and noted
            filled["weights"] = self.weights.filled(PRESETS[preset])
            notes += [
                f"memory.weights.{k}: {getattr(filled['weights'], k):g} (not given)"
                for k in ("recency", "importance", "relevance")
                if getattr(self.weights, k) is None
            ]
        return self.model_copy(update=filled), notes

    def _retrieval_defaults(self, preset: str) -> dict[str, object]:
        """The preset's weights, decay, recency, rank order (only for recency by rank) and
        candidates, for the keys left unset."""
        chosen = PRESETS[preset]
        defaults: dict[str, object] = {
            "weights": RetrievalWeights().filled(chosen),
            "recency_decay": chosen.decay,
            "recency": chosen.recency,
            "candidates": chosen.candidates,
        }
        if (self.recency or chosen.recency) == "rank":
            defaults["rank_order"] = chosen.rank_order
        return defaults

    def _planning_defaults(self) -> dict[str, object]:
        """The paper's and the code's planning values for the keys left unset: three levels,
        a reaction asked each step, talk on with the code's most lines; our importance rule's
        threshold only where that rule is chosen, the most lines only where talk is on."""
        defaults: dict[str, object] = {"plan_levels": 3, "react": "every_step", "talk": True}
        if (self.react or "every_step") == "importance_at_least":
            defaults["react_importance"] = LEGACY_REACT_IMPORTANCE
        if self.talk is not False:
            defaults["talk_turns"] = CODE_TALK_TURNS
        return defaults

    @model_validator(mode="after")
    def _planning_keys_agree(self) -> MemorySettings:
        """Refuse planning keys that would decide nothing, naming the one to change."""
        asked = [k for k in PLANNING_KEYS if getattr(self, k) is not None]
        if self.planning is False and asked:
            raise ValueError(
                f"memory.{asked[0]} shapes plans and reactions, and memory.planning is false; "
                f"leave memory.{asked[0]} out or set planning to true"
            )
        if self.react_importance is not None and self.react != "importance_at_least":
            raise ValueError(
                "memory.react_importance is the threshold of react: importance_at_least; add "
                "react: importance_at_least or leave react_importance out"
            )
        if self.talk_turns is not None and self.talk is False:
            raise ValueError(
                "memory.talk_turns bounds conversations and memory.talk is false; leave "
                "talk_turns out or set talk to true"
            )
        return self

    def plan_rules(self) -> tuple[int, str, int | None, bool, int]:
        """(plan levels, react rule, its importance threshold, talk, most lines) a run plans
        by; a spec stored before these keys existed gets what it ran with then."""
        legacy = self.plan_levels is None and self.react is None and self.talk is None
        levels = self.plan_levels or LEGACY_PLAN_LEVELS
        react = self.react or ("importance_at_least" if legacy else "every_step")
        threshold = self.react_importance or (
            LEGACY_REACT_IMPORTANCE if react == "importance_at_least" else None
        )
        talk = bool(self.talk)
        return levels, react, threshold, talk, self.talk_turns or CODE_TALK_TURNS

    def heard_type(self) -> MemoryType:
        """What a grid agent's record of its own and its neighbours' messages is: an
        observation (the reference code perceives what happens around a persona as events,
        and its retrieval reads events and thoughts, never chat nodes); a spec resolved
        before the candidates could be chosen (`candidates` unset) stored chats, and keeps
        doing so, so that its resumed runs replay their own history."""
        return "chat" if self.is_stream and self.candidates is None else "observation"

    def describe(self) -> str:
        """One header line for a resolved block: what the agents remember and how."""
        if self.kind == "none":
            return "none (nothing carried between steps)"
        if not self.is_stream:
            return "summary (the world's own)"
        return (
            f"stream: retrieval {self.retrieval} (top {self.top_k}), reflection "
            + (f"at importance {self.reflection_threshold}" if self.reflection else "off")
            + f", planning {'on' if self.planning else 'off'}"
            + (self._describe_planning() if self.planning else "")
            + f", embedder {self.embedder}, "
            + f"{self.minutes_per_step} simulated minutes a step"
            + f", ranking ({self._describe_retrieval()})"
            + (
                ""
                if self.day_summaries is None
                else ", beside the day summaries"
                if self.day_summaries
                else ", instead of the day summaries"
            )
        )

    def _describe_retrieval(self) -> str:
        s = self.retrieval_settings()
        recency = (
            f"{s.decay:g} per simulated hour since last access"
            if s.recency == "hours"
            else f"{s.decay:g} per rank by last access, "
            + ("oldest access first" if s.rank_order == "oldest_first" else "newest first")
        )
        return (
            f"weights recency {s.recency_weight:g}, importance {s.importance_weight:g}, "
            f"relevance {s.relevance_weight:g}; recency {recency}; candidates "
            + (
                "all records"
                if s.candidates == "all"
                else "events and thoughts (no chats, no idle)"
            )
        )

    def _describe_planning(self) -> str:
        levels, react, threshold, talk, turns = self.plan_rules()
        return (
            f" ({'day, hours and 5-15-minute actions' if levels == 3 else 'day and hours'}; "
            + (
                "a reaction asked each step"
                if react == "every_step"
                else f"a reaction asked at importance {threshold}"
            )
            + (f"; talk up to {turns} lines)" if talk else "; no talk)")
        )

    def clock(self, minute: int) -> tuple[int, int]:
        """(day from 1, hour 0..23) of a simulated minute."""
        since_midnight = DAY_START_HOUR * 60 + minute
        return since_midnight // (24 * 60) + 1, since_midnight % (24 * 60) // 60

    def retrieval_settings(self) -> RetrievalSettings:
        """The retrieval preset with this block's values over it (call on a resolved block; a
        reference spec stored before the retrieval keys existed gets what it ran with)."""
        preset = PRESETS[self.retrieval or "paper"]
        if self.retrieval == "reference" and all(getattr(self, k) is None for k in RETRIEVAL_KEYS):
            preset = LEGACY_REFERENCE
        weights = (self.weights or RetrievalWeights()).filled(preset)
        given = {
            "top_k": self.top_k,
            "recency_weight": weights.recency,
            "importance_weight": weights.importance,
            "relevance_weight": weights.relevance,
            "decay": self.recency_decay,
            "recency": self.recency,
            "rank_order": self.rank_order,
            "candidates": self.candidates,
        }
        return preset.model_copy(update={k: v for k, v in given.items() if v is not None})


def _yaml(value: object) -> str:
    """A default as the experiment's YAML would write it (true, not True)."""
    if isinstance(value, RetrievalWeights):
        return value.described()
    return str(value).lower() if isinstance(value, bool) else str(value)


def _given(value: float | None, default: float) -> float:
    return default if value is None else value
