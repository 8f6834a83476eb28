"""Names and small helpers shared by the stub LLM server's parts."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

FAULT_KINDS = ("429", "500", "timeout", "drop", "malformed")
RANDOM_FAULT_KINDS = ("429", "500", "drop", "malformed")  # "timeout" only when asked for
CHAT_PATHS = ("/api/chat", "/v1/chat/completions")
DEFAULT_MODELS = ("stub",)
_HIDDEN_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it; credentials are never recorded."""

    path: str
    body: Any
    headers: dict[str, str]
    method: str = "GET"
    received_at: float = 0.0  # time.monotonic()
    query_names: tuple[str, ...] = ()  # the query's parameter names (values may be secrets)
    basic_auth_user: str | None = None  # the user of a Basic Authorization (never its password)


def model_tag(name: str) -> str:
    """Ollama reports every model with a tag; ``llama3`` and ``llama3:latest`` are one model."""
    return name if ":" in name else f"{name}:latest"


def fake_digest(name: str) -> str:
    return hashlib.sha256(model_tag(name).encode()).hexdigest()


def count_words(text: str) -> int:
    return len(text.split())


def apply_limits(text: str, stop: Iterable[str] | None, max_tokens: int | None) -> tuple[str, str]:
    """Honour stop strings and a word budget the way a model would; returns (text, reason)."""
    for s in stop or ():
        if s and s in text:
            text = text[: text.index(s)]
    words = text.split(" ")
    if max_tokens is not None and len(words) > max_tokens:
        return " ".join(words[:max_tokens]), "length"
    return text, "stop"


def openai_error(message: str, kind: str, code: str | None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def fmt_seconds(s: float) -> str:
    return str(int(s)) if float(s).is_integer() else str(s)


def basic_credentials(header: str) -> tuple[str | None, str | None]:
    """(user, password) of a Basic Authorization header; (None, None) for any other."""
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None, None
    try:
        text = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None, None
    user, _, password = text.partition(":")
    return user, password
