"""A scenario: the story the agents decide in, and what each round asks and tells them.

Shipped scenarios live in prompts/network/ (`costly_purchase`, `community_habit`,
`pricier_plan`); a user's own is any YAML file of the same shape. `rounds[0]` is the first
question, which round 0 answers from the agents table without a model; round t >= 1 asks
`rounds[t]` with its new information (a run longer than the list repeats the last round, as
the reference does). `background` and `characteristics` are templates (`{name}`, `{a}`,
`{tau}`, `{f}`, `{lambda}`, `{n_friends}`; a literal brace is `{{`), checked on load; the
other texts are used as written, so the answer format can show JSON braces plainly.
`free_chat_prompt` is what an agent is asked in a free-chat round (`network.free_chat`) before
it answers: one message to its friends; the shipped scenarios keep the default.
"""

from __future__ import annotations

import string
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simulator.errors import UserError
from simulator.worlds.network.domain.agents_table import AgentRow

TEMPLATE_FIELDS = ("name", "a", "tau", "f", "lambda", "n_friends")
SCENARIOS_DIR = Path(str(files("simulator") / "prompts" / "network"))
MAX_TEXT = 20_000
MAX_ROUNDS = 100
DEFAULT_ANSWER_FORMAT = (
    'Answer with one JSON object and nothing else: {"Thought": "a sentence or two on your '
    'reasons", "Opinion": a whole number from 0 (entirely against) to 10 (entirely for), '
    '"Decision": "Yes" or "No"}.'
)
DEFAULT_FREE_CHAT_PROMPT = (
    "Write one short message (at most three sentences) to your friends to persuade them of "
    "your view on the question. Reply with the message only."
)


class ScenarioRound(BaseModel):
    """One round: the question, and the news the agents hear first (none in round 0)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_TEXT)
    new_information: str = Field(default="", max_length=MAX_TEXT)
    # the round's whole text for the accumulated layout (the reference's Q1.md, Q2.md, ...),
    # used as written with `{friends_answers}` replaced; empty: made from the fields above
    prompt: str = Field(default="", max_length=MAX_TEXT)


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120)
    note: str = Field(default="", max_length=2000)
    background: str = Field(min_length=1, max_length=MAX_TEXT)
    characteristics: str = Field(min_length=1, max_length=MAX_TEXT)
    answer_format: str = Field(default=DEFAULT_ANSWER_FORMAT, min_length=1, max_length=MAX_TEXT)
    free_chat_prompt: str = Field(
        default=DEFAULT_FREE_CHAT_PROMPT, min_length=1, max_length=MAX_TEXT
    )  # asked only in free-chat rounds; used as written, like answer_format
    rounds: list[ScenarioRound] = Field(min_length=1, max_length=MAX_ROUNDS)
    # facts handed out one per agent (agent i of a group gets item i mod len): the reference
    # gives each member of a group a different piece of information
    private_information: list[str] = Field(default_factory=list, max_length=MAX_ROUNDS)
    # the accumulated layout's free-chat round asked as an opinion round (the reference's
    # free_chat.md), used as written with `{friends_answers}` replaced; empty: the round's own
    free_chat_round_prompt: str = Field(default="", max_length=MAX_TEXT)
    # the accumulated layout's heading over an agent's private fact, shown to every agent
    # (followed by nothing when it holds none), as the reference does; empty: no heading
    private_heading: str = Field(default="", max_length=MAX_TEXT)

    @field_validator("background", "characteristics")
    @classmethod
    def _template(cls, text: str) -> str:
        check_template(text)
        return text

    def round_for(self, round_index: int) -> ScenarioRound:
        """What round t asks: rounds[t], the last one again once the list runs out."""
        return self.rounds[min(max(round_index, 0), len(self.rounds) - 1)]

    def fill(
        self, template: str, agent: AgentRow, n_friends: int, python_floats: bool = False
    ) -> str:
        """`background` or `characteristics` for one agent; coefficients as written in the
        table (0.3, not 0.30000000000000004), or with `python_floats` as the reference's
        pandas columns print them (str(float): 1.0, 0.05)."""
        number = _python_number if python_floats else _number
        return template.format(
            name=agent.name,
            a=number(agent.a),
            tau=number(agent.tau),
            f=number(agent.f),
            n_friends=n_friends,
            **{"lambda": number(agent.lam)},
        )

    def private_for(self, position: int, holders: int | None = None) -> str:
        """The private fact of the agent at `position` in its group ('' when there are none).
        `holders` None: every agent gets one, the facts cycled; else only the first `holders`
        positions, fact i to position i (the reference's basic_info.json, keyed by position)."""
        items = self.private_information
        if not items:
            return ""
        if holders is None:
            return items[position % len(items)]
        return items[position] if position < min(holders, len(items)) else ""


def _number(value: float) -> str:
    return f"{value:.6g}"


def _python_number(value: float) -> str:
    return str(float(value))


def check_template(text: str) -> None:
    """Only the documented `{fields}`; a literal brace is written `{{` or `}}`."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"{exc} (write a literal brace as {{{{ or }}}})") from None
    for _, field, spec, conversion in parsed:
        if field is not None and (field not in TEMPLATE_FIELDS or spec or conversion):
            raise ValueError(
                f"unknown field {{{field}}}; the fields are "
                + " ".join(f"{{{name}}}" for name in TEMPLATE_FIELDS)
            )


def shipped_scenarios() -> list[str]:
    """The names of the scenarios shipped in prompts/network/."""
    return sorted(p.stem for p in SCENARIOS_DIR.glob("*.yaml"))


def scenario_path(name_or_path: str | Path) -> Path:
    """A shipped scenario by name (`costly_purchase`), else a path to a YAML file."""
    text = str(name_or_path)
    shipped = SCENARIOS_DIR / f"{text}.yaml"
    if Path(text).expanduser().is_dir():
        return Path(text).expanduser()
    if "/" not in text and "\\" not in text and not text.endswith((".yaml", ".yml")):
        if shipped.is_file():
            return shipped
        raise UserError(
            f"no shipped scenario named {text!r}.",
            field="scenario",
            fix=f"use one of {', '.join(shipped_scenarios())}, or the path of a YAML file",
        )
    return Path(text).expanduser()


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A scenario by shipped name or path; errors name the file, line and field."""
    from simulator.domain.yaml_io import load_model
    from simulator.worlds.network.domain.llm_sam_files import is_llm_sam_dir, load_llm_sam_dir

    path = scenario_path(name_or_path)
    if is_llm_sam_dir(path):  # the reference's own prompt directory (prompt/.../expN)
        return load_llm_sam_dir(path)
    return load_model(path, Scenario, "scenario")
