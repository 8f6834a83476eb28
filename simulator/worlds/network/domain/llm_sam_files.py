"""A scenario read from the reference's own prompt directory (pzs19/LLM-SAM `prompt/.../expN/`).

The directory holds `background.md` (the task, the worked examples, the characteristics and the
private-information heading, filled by plain replacement of `{name}`, `{n_friend}`, `{a}`,
`{tau}`, `{f}`, `{lambda}`, `{basic_information}`), `Q1.md`, `Q2.md`, `Q3.md` (each round's
whole text, `{neighbors_opinions}` the friends' answers), optionally `free_chat.md`, and
`basic_info.json` ("Basic Information 1".. the private facts). They become a Scenario whose
texts, filled by the accumulated layout (prompting/network_accumulated.py), give the reference's
prompts unchanged: braces are escaped for our templates, the fields renamed to ours.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from simulator.errors import UserError
from simulator.worlds.network.domain.scenario import Scenario, ScenarioRound

CHARACTERISTICS = "\n\n# Your Characteristics:"
PRIVATE = "\n\n# The basic information you get is:\n\n{basic_information}"
FIELDS = {"{name}": "name", "{n_friend}": "n_friends", "{a}": "a", "{tau}": "tau", "{f}": "f"}


def is_llm_sam_dir(path: Path) -> bool:
    return path.is_dir() and (path / "background.md").is_file() and (path / "Q1.md").is_file()


def load_llm_sam_dir(path: Path) -> Scenario:
    """The scenario of one reference prompt directory; a file that does not have the
    reference's shape is one UserError naming it."""
    background = _read(path / "background.md")
    if CHARACTERISTICS not in background or not background.endswith(PRIVATE):
        raise UserError(
            f"{path / 'background.md'} does not have the reference's sections.",
            field="scenario",
            fix="give a directory of the reference's prompt/ tree (e.g. prompt_3ex/exp1), "
            "whose background.md has '# Your Characteristics:' and ends with "
            "'# The basic information you get is:' and {basic_information}",
        )
    story, characteristics = background[: -len(PRIVATE)].split(CHARACTERISTICS, 1)
    questions = []
    for i in range(1, 100):
        if not (path / f"Q{i}.md").is_file():
            break
        text = _read(path / f"Q{i}.md").replace("{neighbors_opinions}", "{friends_answers}")
        questions.append(ScenarioRound(question=f"Q{i}.md", prompt=text))
    chat = path / "free_chat.md"
    info = path / "basic_info.json"
    facts = json.loads(_read(info)) if info.is_file() else {}
    ordered = sorted(facts, key=lambda k: int(re.sub(r"\D", "", k) or 0))
    return Scenario(
        name=f"LLM-SAM {path.parent.name}/{path.name}",
        note=f"read from the reference's prompt files in {path}",
        background=_template(story),
        characteristics=_template(CHARACTERISTICS.lstrip("\n") + characteristics),
        rounds=questions,
        free_chat_round_prompt=(
            _read(chat).replace("{neighbors_opinions}", "{friends_answers}")
            if chat.is_file()
            else ""
        ),
        private_information=[str(facts[k]) for k in ordered],
        private_heading=PRIVATE.strip("\n").split("\n\n")[0],
    )


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def _template(text: str) -> str:
    """Plain text with the reference's fields as ours: braces doubled, fields put back."""
    text = text.replace("{", "{{").replace("}", "}}")
    for field, ours in {**FIELDS, "{lambda}": "lambda"}.items():
        text = text.replace(field.replace("{", "{{").replace("}", "}}"), "{" + ours + "}")
    return text
