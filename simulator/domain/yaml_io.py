"""YAML in and out. Errors point at file, line and column; export round-trips exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

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


def read_yaml_file(path: str | Path) -> tuple[Any, dict[tuple, yaml.Mark]]:
    """Parse a file; return the data and a map from field path to its position in the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"file {str(path)!r} does not exist", fix="check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {str(path)!r}: {exc}", fix="check the file") from None
    try:
        data = yaml.safe_load(text)
        marks = _marks(yaml.compose(text)) if data is not None else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise UserError(
            f"{path}{where}: malformed YAML ({problem})",
            fix="correct the YAML syntax at that position (indentation, quotes, colons)",
        ) from None
    return data, marks


def _marks(node: yaml.Node | None, prefix: tuple = ()) -> dict[tuple, yaml.Mark]:
    found: dict[tuple, yaml.Mark] = {}
    if node is None:
        return found
    found[prefix] = node.start_mark
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            found[(*prefix, key.value)] = key.start_mark
            found.update({k: v for k, v in _marks(value, (*prefix, key.value)).items() if k})
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found.update(_marks(item, (*prefix, index)))
    return found


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
        raise validation_to_user_error(exc, what, source=source, marks=marks or {}) from None


def validation_to_user_error(
    exc: ValidationError, what: str, *, source: str | None, marks: dict[tuple, yaml.Mark]
) -> UserError:
    """Turn pydantic's report into one paragraph that names the field and the fix."""
    errors = exc.errors()
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    field = _field_path(loc) or what
    mark = _closest_mark(loc, marks)
    where = ""
    if source:
        where = (
            f"{source}, line {mark.line + 1}, column {mark.column + 1}: " if mark else f"{source}: "
        )
    message = first.get("msg", "invalid value").removeprefix("Value error, ")
    kind = first.get("type", "")
    fix = _fix_for(kind, field, first)
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
