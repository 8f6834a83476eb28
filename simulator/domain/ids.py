"""Short ids a person can type (`exp_7f3a9c`), and content hashes for versions and prompts."""

from __future__ import annotations

import hashlib
import itertools
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


def id_run(prefix: str, count: int) -> Iterator[str]:
    """`count` ids in a row from a random start (`conv_4c21a02f`, `conv_4c21a030`, ...), as
    wide as `new_id`'s. A sweep's conversations get one run: stored one after another, each id
    lands beside the one before in every tree keyed by id (random ids put each at a random place:
    creating a million into a store of a million read and wrote a page per conversation). An
    id of the run that is taken already gets a random one, as any taken id does."""
    width = 2 * PREFIX_BYTES.get(prefix, 4)
    space = 16**width
    if count > space // 2:  # a run could not miss the stored ids: draw them at random
        yield from itertools.islice(new_ids(prefix), count)
        return
    start = secrets.randbelow(space - count + 1)
    for number in range(start, start + count):
        yield f"{prefix}_{number:0{width}x}"


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def content_hash(data: Any, length: int = 12) -> str:
    """Stable hash of JSON-able data: equal content, equal hash, on any machine."""
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()[:length]
