"""The OpenAI backend's requests to a plain-HTTP server without the openai package.

`lean_client` gives the lean HTTP client (lean_http.py) for an endpoint it may serve, with the
headers the openai client would send; a reply it would call an error is handed to that client's
own error making (`status_error`), so messages, Retry-After and error codes stay the same.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from simulator.llm.endpoint_url import Endpoint
from simulator.llm.lean_http import HttpReply, LeanClient, LeanTransportError, lean_target
from simulator.llm.transport import TransportKind


class LeanConnectionError(Exception):
    """The exchange failed at the transport level, by kind (llm/transport.py)."""

    def __init__(self, kind: TransportKind) -> None:
        super().__init__(kind)
        self.kind = kind


class LeanStatusError(Exception):
    """The server answered with an error status; `reply` holds it."""

    def __init__(self, reply: HttpReply, url: str) -> None:
        super().__init__(reply.status)
        self.reply, self.url = reply, url


def client_headers(key: str) -> dict[str, str]:
    """The openai client's headers that say something to a server: auth, content, its name and
    the organization and project it reads from the environment."""
    try:
        version = metadata.version("openai")
    except metadata.PackageNotFoundError:
        version = "unknown"
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"AsyncOpenAI/Python {version}",
        "X-Stainless-Lang": "python",
        "X-Stainless-Package-Version": version,
        "X-Stainless-Runtime": platform.python_implementation(),
        "X-Stainless-Runtime-Version": platform.python_version(),
        "Authorization": f"Bearer {key}",
    }
    for name, variable in (
        ("OpenAI-Organization", "OPENAI_ORG_ID"),
        ("OpenAI-Project", "OPENAI_PROJECT_ID"),
    ):
        if os.environ.get(variable):
            headers[name] = os.environ[variable]
    return headers


def lean_client(endpoint: Endpoint, key: str, timeout: float) -> LeanClient | None:
    """The lean client for `endpoint`, or None where the openai client must serve (HTTPS,
    credentials in the URL, a proxy)."""
    target = lean_target(endpoint.url)
    if target is None:
        return None
    host, port, path = target
    return LeanClient(host, port, path, endpoint.query, client_headers(key), timeout)


async def call(
    client: LeanClient, method: str, path: str, body: Any = None, timeout: float | None = None
) -> bytes:
    """The body of a successful reply; LeanConnectionError or LeanStatusError otherwise."""
    data = None
    if body is not None:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        data = text.encode()
    try:
        reply = await client.request(method, path, data, timeout)
    except LeanTransportError as exc:
        raise LeanConnectionError(exc.kind) from None
    if not 200 <= reply.status < 300:
        raise LeanStatusError(reply, client.url(path))
    return reply.body


def status_error(openai_client: Any, exc: LeanStatusError) -> Exception:
    """The openai client's own exception for the error reply (APIStatusError and kin)."""
    http = openai_client._client  # httpx for openai 1.x, httpx2 for 3.x
    cls = next(c for c in type(http).__mro__ if c.__name__ == "AsyncClient")
    library = importlib.import_module(cls.__module__.split(".", 1)[0])
    request = library.Request("POST", exc.url)
    reply = exc.reply
    response = library.Response(
        reply.status, headers=reply.headers, content=reply.body, request=request
    )
    return openai_client._make_status_error_from_response(response)


@dataclass(frozen=True)
class ChatReply:
    text: str
    tokens_in: int | None
    tokens_out: int | None
    model: str | None
    system_fingerprint: str | None


def parse_chat_completion(raw: bytes) -> ChatReply:
    """The fields we keep from a chat completion body; ValueError/TypeError/KeyError/IndexError
    when it is not one (the caller calls that a malformed reply)."""
    data = json.loads(raw)
    message = data["choices"][0]["message"]
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise TypeError("content is not a string")
    usage = data.get("usage") or {}
    tokens_in, tokens_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    for value in (tokens_in, tokens_out):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise TypeError("usage is not a count of tokens")
    model, fingerprint = data.get("model"), data.get("system_fingerprint")
    return ChatReply(
        text=text,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        model=model if isinstance(model, str) else None,
        system_fingerprint=fingerprint if isinstance(fingerprint, str) else None,
    )
