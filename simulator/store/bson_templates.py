"""BSON for many documents that differ from one another only in a few fields.

A sweep's conversations of one cell share everything but their id, key, creation time, order,
repetition and seed; encoding each in full was a fifth of `sweep create`'s time at 1,000,000.
A `Templated` document names those fields (`paths`) and the group it belongs to (`group`);
`Encoder` encodes the first document of a group in full, learns where each named field's value
sits in the bytes, and gives every later one the same bytes with its own values written in.

The bytes are those of a full encode: a group's layout is keyed by each value's BSON type and
length (a longer key, a seed that needs 64 bits, a missing seed each get their own), checked on
first use against a full encode, and any value it cannot place falls back to a full encode.
The caller promises that documents of one group are equal outside `paths`.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable
from typing import Any

import bson
from bson.datetime_ms import DatetimeMS

Path = tuple[str, ...]
STRING, DATETIME, NULL, INT32, INT64 = 0x02, 0x09, 0x0A, 0x10, 0x12


class Templated(dict):
    """A document whose group's members differ only at `paths` (nested keys as tuples)."""

    __slots__ = ("group", "paths")

    def __init__(self, fields: dict, group: Any, paths: tuple[Path, ...]) -> None:
        super().__init__(fields)
        self.group = group
        self.paths = paths


class Encoder:
    """`encode(doc)`: the document's BSON, as `full(doc)` gives it, patched from its group's
    first encode where the document is Templated."""

    def __init__(self, full: Callable[[dict], bytes], codec_options: Any = None) -> None:
        self._full = full
        self._options = codec_options or bson.DEFAULT_CODEC_OPTIONS
        self._layouts: dict[tuple, tuple[bytes, list[tuple[int, int]]] | None] = {}

    def encode(self, doc: dict) -> bytes:
        if not isinstance(doc, Templated):
            return self._full(doc)
        values = [self._value(doc, path) for path in doc.paths]
        shape = (doc.group, doc.paths, *((v[0], len(v)) for v in values))
        if shape not in self._layouts:
            self._layouts[shape] = self._learn(doc, values)
        layout = self._layouts[shape]
        if layout is None:
            return self._full(doc)
        return _patched(layout, values)

    def _value(self, doc: dict, path: Path) -> bytes:
        """The type byte and the encoded value of the field at `path`."""
        value: Any = doc
        for name in path:
            value = value[name]
        element = bson.encode({"": value}, codec_options=self._options)[4:-1]
        return element[:1] + element[2:]  # less the empty name's terminator

    def _learn(self, doc: Templated, values: list[bytes]) -> tuple[bytes, list] | None:
        """Encode the document with a unique stand-in at each path and find them."""
        stand_ins = [_stand_in(v) for v in values]
        if any(s is _UNKNOWN for s in stand_ins):
            return None
        probe = _with_values(doc, doc.paths, stand_ins)
        raw = self._full(probe)
        offsets = []
        for stand_in, value in zip(stand_ins, values, strict=True):
            if value[0] == NULL:
                offsets.append((-1, 0))
                continue
            encoded = self._value({"": stand_in}, ("",))[1:]
            if raw.count(encoded) != 1:
                return None
            offsets.append((raw.index(encoded), len(encoded)))
        layout = (raw, offsets)
        return layout if _patched(layout, values) == self._full(doc) else None


_UNKNOWN = object()


def _patched(layout: tuple[bytes, list[tuple[int, int]]], values: list[bytes]) -> bytes:
    raw, offsets = layout
    out = bytearray(raw)
    for (start, size), value in zip(offsets, values, strict=True):
        if start >= 0:
            out[start : start + size] = value[1:]
    return bytes(out)


def _stand_in(value: bytes) -> Any:
    """A random value of the same BSON type and encoded length, or _UNKNOWN."""
    kind, body = value[0], value[1:]
    if kind == STRING:
        size = struct.unpack("<i", body[:4])[0] - 1
        return "".join(random.choice("0123456789abcdefghijklmnopqrstuvwxyz") for _ in range(size))
    if kind == INT32:
        return random.randrange(-(2**31), 2**31 - 1) | 0x01010101
    if kind == INT64:
        return random.randrange(2**40, 2**62)
    if kind == DATETIME:
        return DatetimeMS(random.randrange(2**40, 2**41))
    if kind == NULL:
        return None
    return _UNKNOWN


def _with_values(doc: dict, paths: tuple[Path, ...], values: list[Any]) -> dict:
    """A copy of `doc` with each path set to its value (nested mappings copied on the way)."""
    copy = dict(doc)
    for path, value in zip(paths, values, strict=True):
        inner = copy
        for name in path[:-1]:
            inner[name] = dict(inner[name])
            inner = inner[name]
        inner[path[-1]] = value
    return copy
