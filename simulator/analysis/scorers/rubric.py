"""Rubrics for the LLM judge: a YAML file, the answer model built from it, and answer parsing.

Rubric YAML (see `prompts/rubrics/prison_goal.yaml`)::

    name: prison_goal                 # the scorer key becomes "judge:prison_goal"
    target: conversation              # the only target a judge scores for now
    goal_section: Prisoner/Goal       # optional: the section {goal} is filled from
    params: {temperature: 0}          # optional sampling parameters (temperature 0 by default)
    reasks: 2                         # optional: re-asks after a malformed answer (0..5)
    system: ...                       # optional system message
    prompt: |-                        # must hold {transcript}; may hold {goal} and {agents}
      ...
    fields:                           # field -> allowed values, or int / int_or_null
      attempted: [yes, no]
      turn: int_or_null

The judge asks for one JSON object with exactly these fields. Why so strict: scores feed tables
and statistics, so an answer is either fully valid (checked by a pydantic model built from
`fields`) or re-asked with feedback naming what was wrong. `key: value` lines are accepted too.
YAML reads unquoted yes/no as booleans; they are turned back into "yes"/"no" here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from simulator.domain.params import GenerationParams
from simulator.domain.yaml_io import read_yaml_file, validation_to_user_error
from simulator.errors import UserError
from simulator.prompting.templates import PROMPTS_DIR

RUBRICS_DIR = PROMPTS_DIR / "rubrics"
INT_KINDS = ("int", "int_or_null")
NULLS = ("null", "none", "n/a", "na", "")
DEFAULT_SYSTEM = (
    "You are a careful annotator of role-play transcripts for a research study. You answer only "
    "with the JSON object you are asked for."
)
_FIELD_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_LINE = re.compile(r"^\s*[-*]?\s*[\"']?([A-Za-z_][A-Za-z0-9_ ]*?)[\"']?\s*[:=]\s*(.*?)\s*,?\s*$")


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_\-]*$", max_length=80)
    description: str = ""
    target: Literal["conversation"] = "conversation"
    goal_section: str | None = Field(default=None, pattern=r"^[^/]+/[^/]+$")
    params: GenerationParams = Field(default_factory=lambda: GenerationParams(temperature=0))
    reasks: int = Field(default=2, ge=0, le=5)
    system: str = DEFAULT_SYSTEM
    prompt: str = Field(min_length=1)
    fields: dict[str, list[str] | Literal["int", "int_or_null"]] = Field(min_length=1)

    @field_validator("fields", mode="before")
    @classmethod
    def _yaml_booleans_are_words(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for key, kind in value.items():
            if isinstance(kind, list):
                kind = [_word(v) for v in kind]
                if not kind:
                    raise ValueError(f"field {key!r} lists no allowed values")
            out[str(key)] = kind
        for key in out:
            if not _FIELD_NAME.match(key) or key.startswith("model_"):
                raise ValueError(f"field name {key!r}: use lower-case letters, digits and _")
        return out

    @field_validator("params", mode="after")
    @classmethod
    def _deterministic_by_default(cls, value: GenerationParams) -> GenerationParams:
        return (
            value if value.temperature is not None else value.merge(GenerationParams(temperature=0))
        )

    @model_validator(mode="after")
    def _placeholders(self) -> Rubric:
        if "{transcript}" not in self.prompt:
            raise ValueError("the prompt must contain {transcript}")
        if "{goal}" in self.prompt and not self.goal_section:
            raise ValueError("the prompt uses {goal}: name the section with goal_section")
        return self

    def answer_model(self) -> type[BaseModel]:
        """A pydantic model with exactly the rubric's fields (extra fields are refused)."""
        spec: dict[str, Any] = {}
        for key, kind in self.fields.items():
            if kind == "int":
                spec[key] = (int, ...)
            elif kind == "int_or_null":
                spec[key] = (int | None, ...)
            else:
                spec[key] = (Literal[tuple(kind)], ...)  # type: ignore[valid-type]
        return create_model(
            f"Answer_{self.name}", __config__=ConfigDict(extra="forbid", strict=False), **spec
        )

    def answer_format(self) -> str:
        lines = ["Answer with one JSON object and nothing else, with exactly these fields:"]
        for key, kind in self.fields.items():
            if kind == "int":
                lines.append(f'- "{key}": an integer')
            elif kind == "int_or_null":
                lines.append(f'- "{key}": an integer, or null')
            else:
                lines.append(f'- "{key}": one of ' + ", ".join(f'"{v}"' for v in kind))
        example = {k: (v[0] if isinstance(v, list) else 1) for k, v in self.fields.items()}
        lines.append("For example: " + json.dumps(example))
        return "\n".join(lines)

    def validate_answer(self, text: str) -> tuple[dict | None, str | None]:
        """(values, None) for a valid answer, else (None, feedback naming what was wrong)."""
        data = parse_answer(text, list(self.fields))
        if data is None:
            return None, "your answer was not a JSON object"
        data = {k: self._normalise(k, v) for k, v in data.items()}
        try:
            return self.answer_model().model_validate(data).model_dump(), None
        except ValidationError as exc:
            return None, "; ".join(self._problem(err) for err in exc.errors())

    def _normalise(self, key: str, value: Any) -> Any:
        kind = self.fields.get(key)
        if isinstance(kind, list):
            word = _word(value).strip().lower()
            return next((v for v in kind if v.lower() == word), value)
        if kind == "int_or_null" and isinstance(value, str) and value.strip().lower() in NULLS:
            return None
        return value

    def _problem(self, err: dict) -> str:
        key = str(err["loc"][0]) if err["loc"] else "answer"
        kind = self.fields.get(key)
        if err["type"] == "missing":
            return f'the field "{key}" is missing'
        if err["type"] == "extra_forbidden":
            return f'"{key}" is not one of the fields asked for'
        got = json.dumps(err.get("input"), default=str)
        if isinstance(kind, list):
            return f'"{key}" must be one of {", ".join(kind)} (you wrote {got})'
        if kind == "int_or_null":
            return f'"{key}" must be an integer or null (you wrote {got})'
        return f'"{key}" must be an integer (you wrote {got})'


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def parse_answer(text: str, fields: list[str]) -> dict | None:
    """A JSON object anywhere in the text (code fences allowed), else `field: value` lines."""
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            data = json.loads(text[start : end + 1])
        except (json.JSONDecodeError, RecursionError):  # deeply nested brackets
            data = None
        if isinstance(data, dict):
            return data
    found: dict[str, Any] = {}
    wanted = {f.lower(): f for f in fields}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match and match.group(1).strip().lower() in wanted:
            found[wanted[match.group(1).strip().lower()]] = _scalar(match.group(2))
    return found or None


def _scalar(raw: str) -> Any:
    raw = raw.strip().strip("\"'`")
    if raw.lower() in NULLS:
        return None
    return int(raw) if re.fullmatch(r"-?\d+", raw) else raw


def find_rubric(name_or_path: str) -> Path:
    """A shipped rubric by name (`prompts/rubrics/NAME.yaml`), else a path to a YAML file."""
    by_name = RUBRICS_DIR / f"{name_or_path}.yaml"
    if re.fullmatch(r"[A-Za-z0-9_\-]+", name_or_path) and by_name.is_file():
        return by_name
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    shipped = ", ".join(sorted(p.stem for p in RUBRICS_DIR.glob("*.yaml"))) or "none"
    raise UserError(
        f"no rubric named {name_or_path!r} and no such file",
        field="--scorer",
        fix=f"use a shipped rubric ({shipped}) or a path to a rubric YAML file",
    )


def load_rubric(name_or_path: str) -> Rubric:
    path = find_rubric(name_or_path)
    data, marks = read_yaml_file(path)  # the same guards as experiment and sweep files
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        raise validation_to_user_error(exc, "rubric", source=str(path), marks=marks) from None
