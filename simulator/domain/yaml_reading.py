"""Reading a YAML file safely: only regular files of bounded size, no alias bombs, deep
nesting, huge lists or numbers, duplicate keys or unusual tags; every refusal names the line.

Why apart from yaml_io: this is the defence against hostile input (see limits.py); yaml_io turns
the data into models and errors into one paragraph.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any, ClassVar

import yaml

from simulator.domain.limits import (
    MAX_INT_DIGITS,
    MAX_YAML_ALIASES,
    MAX_YAML_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_ITEMS,
    MAX_YAML_NODES,
)
from simulator.errors import UserError


def read_yaml_file(path: str | Path) -> tuple[Any, dict[tuple, yaml.Mark]]:
    """Parse a file; return the data and a map from field path to its position in the file.

    Only an ordinary file of at most MAX_YAML_BYTES is read (a FIFO, a device or a folder is
    refused without opening it for a blocking read), and the YAML is held to the bounds in
    `simulator.domain.limits`, so a hostile file cannot hang the tool or fill its memory.
    """
    path = Path(path)
    text = _read_text(path)
    _check_printable(text, str(path))
    loader = _StrictLoader(text, str(path))
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        _check_expanded_size(node, str(path))
        data = loader.construct_document(node)
        return data, _marks(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise UserError(
            f"{path}{where}: malformed YAML ({problem})",
            fix="correct the YAML syntax at that position (indentation, quotes, colons)",
        ) from None
    finally:
        loader.dispose()


def _read_text(path: Path) -> str:
    name = str(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(name, info.st_mode)
        _check_file_size(name, info.st_size)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        with os.fdopen(os.open(path, flags), "rb") as handle:
            opened = os.fstat(handle.fileno())
            if not stat.S_ISREG(opened.st_mode):  # replaced between stat and open
                raise _not_regular(name, opened.st_mode)
            raw = handle.read(MAX_YAML_BYTES + 1)
        _check_file_size(name, len(raw))
        return raw.decode("utf-8")
    except FileNotFoundError:
        raise UserError(f"file {name!r} does not exist", fix="check the path") from None
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{name!r} is not UTF-8 text (byte {exc.start} cannot be decoded)",
            fix="save the file as UTF-8 text",
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UserError(
            f"cannot read {name!r}: {reason}", fix="check the path and the file"
        ) from None


_CHARACTER_NAMES = {0: "NUL", 0x1B: "ESC", 0x7F: "DEL", 0xFFFE: "a noncharacter"}


def _check_printable(text: str, name: str) -> None:
    """YAML allows no control character but tab and line breaks; PyYAML would raise its own
    error while the loader is being built, so the first one is named here with its place."""
    found = yaml.reader.Reader.NON_PRINTABLE.search(text)
    if found is None:
        return
    start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    code = ord(found.group())
    label = f"U+{code:04X}" + (f" ({_CHARACTER_NAMES[code]})" if code in _CHARACTER_NAMES else "")
    raise UserError(
        f"{name}, line {line}, column {column}: the control character {label} is not allowed "
        "in a YAML file (only tab and line breaks are)",
        fix="delete that character (an editor may show it as ^@ or a box); a file that holds "
        "many of them is not a YAML text file: save it as plain UTF-8 text",
    )


def _not_regular(name: str, mode: int) -> UserError:
    kind = "a folder" if stat.S_ISDIR(mode) else "not an ordinary file (a device, pipe or socket)"
    return UserError(
        f"{name!r} is {kind}", fix="save the YAML in an ordinary file and give its path"
    )


def _check_file_size(name: str, size: int) -> None:
    if size > MAX_YAML_BYTES:
        raise UserError(
            f"{name!r} is larger than {MAX_YAML_BYTES:,} bytes, the most a YAML file may hold",
            fix="shorten the file (an experiment or sweep fits in a few kilobytes)",
        )


_PLAIN_TAGS = {None, "!"} | {
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map")
}
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader held to the documented bounds: aliases, depth, sizes, tags, keys, numbers.

    Dates stay text (no implicit timestamps): a note or title never becomes a datetime.
    """

    yaml_implicit_resolvers: ClassVar[dict] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, text: str, source: str):
        super().__init__(text)
        self.source = source
        self._depth = 0
        self._aliases = 0
        self._nodes = 0
        self._open_anchors: set[str] = set()

    def refuse(self, mark: yaml.Mark | None, problem: str, fix: str) -> UserError:
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return UserError(f"{self.source}{where}: {problem}", fix=fix)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise self.refuse(
                    event.start_mark,
                    f"more than {MAX_YAML_ALIASES} aliases (*name) in one file",
                    "write the repeated values out, or use fewer aliases",
                )
            if event.anchor in self._open_anchors:
                raise self.refuse(
                    event.start_mark,
                    f"the alias *{event.anchor} refers to a value that contains it",
                    f"remove *{event.anchor} from inside &{event.anchor}",
                )
            return super().compose_node(parent, index)
        tag = getattr(event, "tag", None)
        if tag not in _PLAIN_TAGS:
            tag = tag.replace("tag:yaml.org,2002:", "!!")
            raise self.refuse(
                event.start_mark,
                f"the tag {tag} is not allowed; only plain text, numbers, lists and mappings are",
                f"remove {tag} and write the value as plain text",
            )
        anchor = getattr(event, "anchor", None)
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:  # stop parsing early; aliases are counted later
            raise self.refuse(
                event.start_mark,
                f"the file holds more than {MAX_YAML_NODES:,} values",
                "shorten it; an experiment or a sweep needs a few hundred",
            )
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise self.refuse(
                event.start_mark,
                f"values are nested more than {MAX_YAML_DEPTH} levels deep",
                "flatten the structure; experiments and sweeps need only a few levels",
            )
        if anchor is not None:
            self._open_anchors.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
            self._open_anchors.discard(anchor)
        if isinstance(node, yaml.CollectionNode):
            self._check_collection(node)
        return node

    def _check_collection(self, node: yaml.CollectionNode) -> None:
        if len(node.value) > MAX_YAML_ITEMS:
            raise self.refuse(
                node.start_mark,
                f"a list or mapping holds {len(node.value):,} entries (at most {MAX_YAML_ITEMS:,})",
                "shorten it",
            )
        if not isinstance(node, yaml.MappingNode):
            return
        seen: dict[tuple[str, str], int] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            line = key.start_mark.line + 1
            first = seen.setdefault((key.tag, key.value), line)
            if first != line:
                raise self.refuse(
                    key.start_mark,
                    f"the key {key.value!r} appears twice (first on line {first})",
                    "keep one of them; YAML would silently use only the last",
                )

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        body = str(node.value).replace("_", "").lstrip("+-")
        if isinstance(node, yaml.ScalarNode) and len(body) > MAX_INT_DIGITS + 2:  # 0x/0o/0b
            raise self.refuse(
                node.start_mark,
                f"a whole number with more than {MAX_INT_DIGITS} digits",
                "use a smaller number (seeds go up to 2**63-1)",
            )
        return self._explicit(node, super().construct_yaml_int, "a whole number")

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value = self._explicit(node, super().construct_yaml_float, "a number")
        if not math.isfinite(value):
            raise self.refuse(
                node.start_mark,
                f"{node.value!r} is not a finite number",
                "write an ordinary number such as 0.7",
            )
        return value

    def construct_yaml_bool(self, node: yaml.ScalarNode) -> bool:
        return self._explicit(node, super().construct_yaml_bool, "true or false")

    def _explicit(self, node: yaml.ScalarNode, construct: Any, what: str) -> Any:
        """An explicit `!!int foo` reaches the constructor unchecked; say so instead of failing."""
        try:
            return construct(node)
        except (ValueError, KeyError, TypeError, IndexError):
            raise self.refuse(
                node.start_mark,
                f"{node.value!r} is tagged as {what} but is not one",
                "remove the tag or correct the value",
            ) from None


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _StrictLoader.construct_yaml_float)
_StrictLoader.add_constructor("tag:yaml.org,2002:bool", _StrictLoader.construct_yaml_bool)


def _check_expanded_size(root: yaml.Node, source: str) -> None:
    """Count values with every alias expanded (a "billion laughs" file is tiny until then)."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in size:
            continue
        children = _children(node)
        if not children_done:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in size)
            continue
        size[id(node)] = 1 + sum(size[id(child)] for child in children)
        depth[id(node)] = 1 + max((depth[id(child)] for child in children), default=0)
    if size[id(root)] > MAX_YAML_NODES or depth[id(root)] > MAX_YAML_DEPTH:
        raise UserError(
            f"{source}: with its aliases expanded the file holds {size[id(root)]:,} values "
            f"nested {depth[id(root)]} deep (at most {MAX_YAML_NODES:,} values, "
            f"{MAX_YAML_DEPTH} deep)",
            fix="write the values out without aliases that refer to other aliases",
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


KEY_MARK = "\0key"  # marks[(KEY_MARK, *path)]: the position of the key itself


def _marks(node: yaml.Node | None, prefix: tuple = ()) -> dict[tuple, yaml.Mark]:
    found: dict[tuple, yaml.Mark] = {}
    if node is None:
        return found
    found[prefix] = node.start_mark
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            here = (*prefix, key.value)
            found[here] = key.start_mark
            found[(KEY_MARK, *here)] = key.start_mark  # where an unknown key is reported
            found.update({k: v for k, v in _marks(value, here).items() if k})
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found.update(_marks(item, (*prefix, index)))
    return found
