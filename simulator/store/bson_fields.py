"""A few top-level fields of a stored BSON document, without decoding the rest.

A scan of the embedded store's table for a status count or a listing needs four or five fields
of each conversation; decoding whole documents (spec, agents, summaries) was 2 s per 100,000.
`top_fields` walks the top-level element headers (type, name, size), copies the wanted elements
into a small document and lets pymongo's decoder decode exactly those bytes, so every value
is what a full decode gives. An element type it does not know makes it return None: the caller
decodes the whole document instead.
"""

from __future__ import annotations

import struct
from typing import Any

from bson import decode
from bson.codec_options import CodecOptions

_INT32 = struct.Struct("<i")
# BSON element types of fixed size (bsonspec.org): double, undefined, ObjectId, bool, datetime,
# null, int32, timestamp, int64, decimal128, min key, max key
_FIXED = {1: 8, 6: 0, 7: 12, 8: 1, 9: 8, 10: 0, 16: 4, 17: 8, 18: 8, 19: 16, 255: 0, 127: 0}
_LENGTH_PREFIXED = {2, 13, 14}  # string, JavaScript code, symbol: int32 length + bytes
_SELF_SIZED = {3, 4, 15}  # document, array, code with scope: int32 total size
_BINARY = 5  # int32 length + subtype byte + bytes


def top_fields(raw: bytes, names: frozenset[bytes], options: CodecOptions) -> dict[str, Any] | None:
    """The document's top-level fields among `names` (UTF-8 bytes), decoded; None when an
    element type is unknown (decode the whole document then)."""
    end, at = len(raw) - 1, 4
    parts: list[bytes] = []
    while at < end:
        kind = raw[at]
        name_end = raw.index(b"\x00", at + 1)
        value = name_end + 1
        size = _value_size(raw, kind, value)
        if size is None:
            return None
        if raw[at + 1 : name_end] in names:
            parts.append(raw[at : value + size])
            if len(parts) == len(names):  # names are distinct at the top level
                break
        at = value + size
    body = b"".join(parts)
    return decode(_INT32.pack(len(body) + 5) + body + b"\x00", codec_options=options)


def _value_size(raw: bytes, kind: int, at: int) -> int | None:
    if kind in _FIXED:
        return _FIXED[kind]
    if kind in _LENGTH_PREFIXED:
        return 4 + _INT32.unpack_from(raw, at)[0]
    if kind in _SELF_SIZED:
        return _INT32.unpack_from(raw, at)[0]
    if kind == _BINARY:
        return 5 + _INT32.unpack_from(raw, at)[0]
    if kind == 11:  # regular expression: two C strings
        return raw.index(b"\x00", raw.index(b"\x00", at) + 1) + 1 - at
    return None
