"""YAML in and out. Errors point at file, line and column; export round-trips exactly."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from simulator.domain.yaml_reading import KEY_MARK, read_yaml_file
from simulator.errors import UserError

ModelT = TypeVar("ModelT", bound=BaseModel)


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings as `|` blocks so prompts stay readable and diffable."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    long_or_multiline = "\n" in value or len(value) > 80
    style = "|" if long_or_multiline and not value.startswith((" ", "\t")) else None
    if style and any(line != line.rstrip() for line in value.split("\n")):
        style = None  # trailing spaces cannot survive a block scalar
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_representer)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=10_000)


def load_model(path: str | Path, model: type[ModelT], what: str) -> ModelT:
    """Read a YAML file into a pydantic model, or raise one clear UserError."""
    data, marks = read_yaml_file(path)
    if not isinstance(data, dict):
        raise UserError(
            f"{path}: expected a mapping of {what} fields at the top level, found "
            f"{type(data).__name__}",
            fix=f"start the file with the {what}'s fields, e.g. 'name: ...'",
        )
    return validate_model(data, model, what, source=str(path), marks=marks)


def validate_model(
    data: dict,
    model: type[ModelT],
    what: str,
    *,
    source: str | None = None,
    marks: dict[tuple, yaml.Mark] | None = None,
) -> ModelT:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_to_user_error(
            exc, what, source=source, marks=marks or {}, model=model
        ) from None


def validation_to_user_error(
    exc: ValidationError,
    what: str,
    *,
    source: str | None,
    marks: dict[tuple, yaml.Mark],
    model: type[BaseModel] | None = None,
) -> UserError:
    """Turn pydantic's report into one paragraph that names the field and the fix.

    An unknown key gets the field it most likely meant (`messages` -> `total_messages`).
    """
    errors = exc.errors()
    # An unknown key first: a misspelt field is also reported missing, and the rename is the fix.
    first = next((e for e in errors if e.get("type") == "extra_forbidden"), errors[0])
    loc = tuple(first.get("loc", ()))
    field = _field_path(loc) or what
    mark = _closest_mark(loc, marks)
    if first.get("type") == "extra_forbidden":
        mark = marks.get((KEY_MARK, *loc), mark)
    where = ""
    if source:
        where = (
            f"{source}, line {mark.line + 1}, column {mark.column + 1}: " if mark else f"{source}: "
        )
    message = first.get("msg", "invalid value").removeprefix("Value error, ")
    kind = first.get("type", "")
    fix = _fix_for(kind, field, first)
    if kind == "extra_forbidden" and loc:
        fix = key_fix(loc, model or _model_named(exc.title)) or fix
    more = f" ({len(errors) - 1} more problem(s) after this one)" if len(errors) > 1 else ""
    return UserError(f"{where}{field}: {message}{more}.", fix=fix)


def _field_path(loc: tuple) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _closest_mark(loc: tuple, marks: dict[tuple, yaml.Mark]) -> yaml.Mark | None:
    for end in range(len(loc), -1, -1):
        if loc[:end] in marks and (end or loc == ()):
            return marks[loc[:end]]
    return marks.get(())


def _fix_for(kind: str, field: str, error: dict) -> str:
    if kind == "extra_forbidden":
        return f"remove '{field}' or check its spelling against the documented fields"
    if kind == "missing":
        return f"add '{field}'"
    if kind.startswith(("greater_than", "less_than")) or "too_" in kind:
        return f"choose a value for '{field}' within the stated bounds"
    if kind.endswith(("_type", "_parsing")):
        return f"give '{field}' a value of the expected type"
    return f"correct '{field}' as the message says"


# Keys people write for a field under another name: CLI flags, singulars, near synonyms.
KEY_ALIASES = {
    "messages": "total_messages",
    "message_count": "total_messages",
    "num_messages": "total_messages",
    "n_messages": "total_messages",
    "speaker": "speaker_methods",
    "speakers": "speaker_methods",
    "speaker_method": "speaker_methods",
    "speaking_order": "speaker_methods",
    "llm": "llms",
    "models": "llms",
    "model": "llms",
    "every_combination": "every_agent_combination",
    "all_combinations": "every_agent_combination",
    "every_agent_count": "every_agent_combination",
    "every_day": "every_day_count",
    "every_days": "every_day_count",
    "seeds": "seed",
    "random_seed": "seed",
    "repetition": "repetitions",
    "repeats": "repetitions",
    "reps": "repetitions",
    "runs": "repetitions",
    "day": "days",
    "agent": "agents",
    "agents_per_role": "agents",
    "variant": "variants",
    "link": "linked",
    "links": "linked",
    "linked_groups": "linked",
    "paired": "linked",
    "pairs": "linked",
    "combos": "combinations",
    "cell": "cells",
    "cell_list": "cells",
    "counting": "message_counting",
    "messages_counting": "message_counting",
    "manager": "manager_llm",
    "summarizer": "summarizer_llm",
    "summariser_llm": "summarizer_llm",
    "assignments": "llm_assignments",
    "llm_assignment": "llm_assignments",
    "role": "roles",
    "section": "sections",
    "shared": "shared_sections",
    "summary_sections": "summarizer_sections",
    "starting_prompt": "starting_message",
    "start_message": "starting_message",
    "first_message": "starting_message",
    "notes": "note",
    "description": "note",
    "favorite": "favourite",
    "parameters": "params",
    "sampling": "params",
    "url": "base_url",
    "baseurl": "base_url",
    "endpoint": "base_url",
    "temp": "temperature",
    "max_new_tokens": "max_tokens",
    "max_length": "max_tokens",
    "context": "num_ctx",
    "n_ctx": "num_ctx",
    "context_length": "num_ctx",
    "stop_sequences": "stop",
    "text": "content",
    "prompt": "content",
    "name": "title",
    "default": "default_variant",
}


def key_fix(loc: tuple, model: type[BaseModel] | None) -> str | None:
    """'rename X to Y' for an unknown key, when the model at that place has a field Y."""
    owner = _model_at(model, loc[:-1]) if model is not None else None
    if owner is None or not isinstance(loc[-1], str):
        return None
    fields = list(owner.model_fields)
    wrong = loc[-1]
    guess = suggest_key(wrong, fields)
    if guess:
        return f"rename '{wrong}' to '{guess}'"
    return f"remove '{wrong}'; the fields here are " + ", ".join(fields)


def suggest_key(wrong: str, fields: list[str]) -> str | None:
    normal = wrong.strip().lower().replace("-", "_").replace(" ", "_")
    if normal in fields:
        return normal
    alias = KEY_ALIASES.get(normal) or KEY_ALIASES.get(normal.rstrip("s"))
    if alias in fields:
        return alias
    close = difflib.get_close_matches(normal, fields, n=1, cutoff=0.6)
    if close:
        return close[0]
    return next((f for f in fields if len(normal) >= 4 and normal in f), None)


def _model_at(model: type[BaseModel], path: tuple) -> type[BaseModel] | None:
    """The pydantic model that holds the key at `path` (list indexes and dict keys skipped)."""
    current, skip_key = model, False
    for part in path:
        if isinstance(part, int):
            continue
        if skip_key:
            skip_key = False
            continue
        info = current.model_fields.get(part)
        if info is None:
            return None
        found, skip_key = _inner_model(info.annotation)
        if found is None:
            return None
        current = found
    return current


def _inner_model(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    for arg in get_args(annotation):
        found, keyed = _inner_model(arg)
        if found is not None:
            return found, keyed or get_origin(annotation) is dict
    return None, False


def _model_named(title: str) -> type[BaseModel] | None:
    """The model a ValidationError came from, when the caller did not pass it."""
    pending = list(BaseModel.__subclasses__())
    while pending:
        candidate = pending.pop()
        if candidate.__name__ == title:
            return candidate
        pending.extend(candidate.__subclasses__())
    return None
