"""Documents made from a shared base, encoded to BSON from the base's elements encoded once.

A sweep's conversations of one cell differ in a few fields (id, key, order, repetition,
creation time, the spec's seed); the rest (cell, agents, day split, most of the spec) is the
same objects. Encoding each whole document took about 10 µs, 10 s of a million-conversation
`sweep create`. A `Derived` document is `{**base, **own}`, a plain dict to every reader; an
encoder that knows it (`DerivedEncoder`) joins the base's elements, encoded once, with its own
fields encoded each time, in the order `bson.encode` writes them, so the bytes are the same.

A `Derived` document changed after it was made (a field of the base replaced, a field added or
removed) is encoded in full: every method that changes a dict marks it. Copies of it are plain
dicts. Values are not copied: the base's nested values must not change while documents made
from it are encoded (a sweep's templates do not).
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Callable, Mapping
from typing import Any

_DOCUMENT = b"\x03"  # BSON element type of an embedded document
_LENGTH = struct.Struct("<i")


_init, _update = dict.__init__, dict.update


def _changing(name: str) -> Callable:
    """dict's method `name`, marking the document changed first."""
    method = getattr(dict, name)

    def changing(self: Derived, *args: Any, **kwargs: Any) -> Any:
        self.changed = True
        return method(self, *args, **kwargs)

    changing.__name__ = name
    return changing


class Derived(dict):
    """`{**base, **own}`, remembering both until it is changed."""

    __slots__ = ("base", "changed", "own")

    def __init__(self, base: Mapping[str, Any], own: Mapping[str, Any]) -> None:
        _init(self, base)
        _update(self, own)
        self.base, self.own, self.changed = base, tuple(own), False

    def __reduce__(self) -> tuple:  # copies (deepcopy, pickle) are plain dicts
        return dict, (dict(self),)

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self.own:
            self.changed = True
        super().__setitem__(key, value)

    __delitem__ = _changing("__delitem__")
    __ior__ = _changing("__ior__")
    update = _changing("update")
    setdefault = _changing("setdefault")
    pop = _changing("pop")
    popitem = _changing("popitem")
    clear = _changing("clear")


class DerivedEncoder:
    """`encode(doc)` gives what `encode_document(doc)` gives, faster for `Derived` documents.

    `encode_document`: the store's own encoder of a whole document (its codec options). An
    element of any other type than text, whole number or None is encoded by it, as the body
    of a one-field document, so both agree on every value; those three are written here
    (BSON's string, int32/int64 and null) unless the store's encoder writes them otherwise."""

    def __init__(self, encode_document: Callable[[Mapping[str, Any]], bytes]) -> None:
        self._encode = encode_document
        self._plans: dict[tuple[int, tuple[str, ...], bool], tuple[Any, list]] = {}
        self._last: dict[str, tuple[Any, bytes]] = {}  # an own field's last value, by identity
        probes = ("", "text é", 0, -(2**31), 2**31, -(2**63), None)
        self._scalars = all(
            _scalar(b"k\x00", value) == encode_document({"k": value})[4:-1] for value in probes
        )

    def encode(self, doc: Mapping[str, Any]) -> bytes:
        return self._document(doc, top_level=True)

    def _document(self, doc: Mapping[str, Any], top_level: bool) -> bytes:
        if type(doc) is not Derived or doc.changed:
            return self._encode(doc)
        parts: list[bytes] = []
        append, scalars = parts.append, self._scalars
        for step in self._plan(doc, top_level):  # written for speed: a million per sweep
            if type(step) is bytes:
                append(step)
                continue
            key, name = step
            value = doc[key]
            kind = type(value)
            if scalars and name is not None:
                if kind is str:
                    try:
                        data = value.encode()
                    except UnicodeEncodeError:  # the store's encoder says what is wrong
                        append(self._element(key, name, value))
                        continue
                    append(b"\x02" + name + _LENGTH.pack(len(data) + 1) + data + b"\x00")
                    continue
                if kind is int and value in _INT32:
                    append(b"\x10" + name + _LENGTH.pack(value))
                    continue
            append(self._element(key, name, value))
        body = b"".join(parts)
        return _LENGTH.pack(len(body) + 5) + body + b"\x00"

    def _element(self, key: str, name: bytes | None, value: Any) -> bytes:
        """One own field's element; `name`: its key as a C string (None: the key holds a NUL,
        which the store's encoder refuses as it should)."""
        kind = type(value)
        if name is not None:
            if kind is Derived and not value.changed:
                return _DOCUMENT + name + self._document(value, top_level=False)
            if self._scalars and (kind is str or kind is int or value is None):
                element = _scalar(name, value)
                if element is not None:
                    return element
        if kind in _IMMUTABLE:  # a creation time: the same object for a millisecond's documents
            last = self._last.get(key)
            if last is not None and last[0] is value:
                return last[1]
        element = self._encode({key: value})[4:-1]
        if kind in _IMMUTABLE:
            self._last[key] = (value, element)
        return element

    def _plan(self, doc: Derived, top_level: bool) -> list:
        """The document's elements in `bson.encode`'s order (`_id` first at the top level):
        bytes for runs of the base's elements, (key, C-string name) for each of its own."""
        key = (id(doc.base), doc.own, top_level)
        kept = self._plans.get(key)
        if kept is not None and kept[0] is doc.base:
            return kept[1]
        own = set(doc.own)
        order = list(doc)
        if top_level and "_id" in doc:  # bson.encode writes a top-level _id first
            order.remove("_id")
            order.insert(0, "_id")
        plan: list = []
        for name in order:
            if name in own:
                plan.append((name, None if "\x00" in name else name.encode() + b"\x00"))
            elif plan and type(plan[-1]) is bytes:
                plan[-1] += self._encode({name: doc.base[name]})[4:-1]
            else:
                plan.append(self._encode({name: doc.base[name]})[4:-1])
        self._plans[key] = (doc.base, plan)  # the base is held: its id stays its own
        return plan


_IMMUTABLE = frozenset({datetime.datetime, float})
_INT32 = range(-(2**31), 2**31)
_INT64 = range(-(2**63), 2**63)
_INT64_STRUCT = struct.Struct("<q")


def _scalar(name: bytes, value: str | int | None) -> bytes | None:
    """BSON element of a text, a whole number or None (None for a number BSON cannot hold)."""
    if value is None:
        return b"\x0a" + name
    if type(value) is str:
        try:
            data = value.encode()
        except UnicodeEncodeError:  # a lone surrogate: the store's encoder says what is wrong
            return None
        return b"\x02" + name + _LENGTH.pack(len(data) + 1) + data + b"\x00"
    if value in _INT32:
        return b"\x10" + name + _LENGTH.pack(value)
    if value in _INT64:
        return b"\x12" + name + _INT64_STRUCT.pack(value)
    return None
