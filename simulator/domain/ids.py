"""Short ids a person can type (`exp_7f3a9c`), and content hashes for versions and prompts."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterator
from typing import Any

PREFIX_BYTES = {"exp": 3, "conv": 4, "sweep": 3}


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(PREFIX_BYTES.get(prefix, 4))}"


def new_ids(prefix: str, block: int = 4096) -> Iterator[str]:
    """`new_id(prefix)` again and again, the random bytes drawn `block` ids at a time (a sweep
    of a million names a million conversations: one draw each cost a second)."""
    width = 2 * PREFIX_BYTES.get(prefix, 4)
    while True:
        drawn = secrets.token_hex(width // 2 * block)
        for start in range(0, len(drawn), width):
            yield f"{prefix}_{drawn[start : start + width]}"


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def content_hash(data: Any, length: int = 12) -> str:
    """Stable hash of JSON-able data: equal content, equal hash, on any machine."""
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()[:length]
