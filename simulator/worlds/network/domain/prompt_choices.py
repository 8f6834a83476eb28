"""How an opinion-network agent's prompt is put together: a named profile and its switches.

Two profiles. `reference` builds the prompt as pzs19/LLM-SAM does (utils/prompt_manager.py,
utils/network.py): one text that grows round by round (the background, the first question and
the agent's own first answer, then every later round's text with that round's friends'
answers, one "NAME's ouput is {...}" line each), never the agent's later answers (it sees them
only when a self-loop makes it its own friend); `{n_friends}` is the group's size; a free-chat
round is another JSON opinion round asked with the scenario's `free_chat_prompt`; only the
first five agents of a group get a private fact. `simulator` is this tool's own layout (a
system text and a user text; every earlier answer of the agent's own; only the last round's
friends' answers; `{n_friends}` the agent's degree; free chat a separate message stage; the
private facts cycled so every agent gets one). Each switch may be set on its own over the
profile's value; an experiment without `prompts:` keeps `simulator`, the layout its runs have
always had.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Profile = Literal["reference", "simulator"]
SWITCHES = (
    "layout",
    "own_answers",
    "friends_rounds",
    "n_friends",
    "free_chat_as",
    "private_holders",
)
REFERENCE_HOLDERS = 5  # the reference's basic_info.json has five facts, keyed by group position


class PromptSwitches(BaseModel):
    """Every choice resolved (what a run uses and prints)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: Literal["accumulated", "chat"]  # one growing text, or system + user messages
    own_answers: Literal["first", "all"]  # the agent's own answers shown: round 0's, or all
    friends_rounds: Literal["all", "last"]  # friends' answers of every earlier round, or last
    n_friends: Literal["group", "degree"]  # what fills {n_friends}
    free_chat_as: Literal["opinion_round", "message"]  # what a free-chat round is
    private_holders: int | None  # agents (first in the group) with a fact; None: all, cycled

    def described(self) -> str:
        """One line for a run's header, each switch by its name in `network.prompts`."""
        holders = "all" if self.private_holders is None else str(self.private_holders)
        return (
            f"layout {self.layout}, own_answers {self.own_answers}, friends_rounds "
            f"{self.friends_rounds}, n_friends {self.n_friends}, free_chat_as "
            f"{self.free_chat_as}, private_holders {holders}"
        )


PROFILES: dict[str, PromptSwitches] = {
    "reference": PromptSwitches(
        layout="accumulated",
        own_answers="first",
        friends_rounds="all",
        n_friends="group",
        free_chat_as="opinion_round",
        private_holders=REFERENCE_HOLDERS,
    ),
    "simulator": PromptSwitches(
        layout="chat",
        own_answers="all",
        friends_rounds="last",
        n_friends="degree",
        free_chat_as="message",
        private_holders=None,
    ),
}


class PromptChoices(BaseModel):
    """`network.prompts`: a profile, and any switch set over it (unset: the profile's)."""

    model_config = ConfigDict(extra="forbid")

    profile: Profile = "simulator"
    layout: Literal["accumulated", "chat"] | None = None
    own_answers: Literal["first", "all"] | None = None
    friends_rounds: Literal["all", "last"] | None = None
    n_friends: Literal["group", "degree"] | None = None
    free_chat_as: Literal["opinion_round", "message"] | None = None
    # a count of agents, or "all" (every agent, the facts cycled)
    private_holders: Annotated[int, Field(ge=0, le=100_000)] | Literal["all"] | None = None

    def resolved(self) -> PromptSwitches:
        base = PROFILES[self.profile].model_dump()
        chosen = {k: getattr(self, k) for k in SWITCHES if getattr(self, k) is not None}
        if chosen.get("private_holders") == "all":
            chosen["private_holders"] = None
        return PromptSwitches(**{**base, **chosen})

    @property
    def is_default(self) -> bool:
        return self == PromptChoices()
