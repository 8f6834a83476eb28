"""Short ids a person can type (`exp_7f3a9c`), and content hashes for versions and prompts."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

PREFIX_BYTES = {"exp": 3, "conv": 4, "sweep": 3}


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(PREFIX_BYTES.get(prefix, 4))}"


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def content_hash(data: Any, length: int = 12) -> str:
    """Stable hash of JSON-able data: equal content, equal hash, on any machine."""
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()[:length]
