"""Ollama backend: pulls the model on first use (with progress) and records its digest.

Why lazy: building a backend must be free (the CLI builds them while validating a config), so
nothing talks to Ollama until `preflight()` or the first `chat()`. The first chat checks
`/api/tags` once, behind a lock, and pulls a missing model exactly once even when many
conversations start together. Progress goes to a plain callback; the core never imports rich.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlparse

import httpx
import ollama
import pydantic

from simulator.domain.params import GenerationParams
from simulator.llm.base import (
    ChatMessage,
    Completion,
    FatalBackendError,
    RateLimitedError,
    TransientBackendError,
)
from simulator.llm.retry import parse_retry_after
from simulator.llm.transport import classify, describe, preflight_timeout_s

DEFAULT_HOST = "http://127.0.0.1:11434"
PullProgress = Callable[[str, int | None, int | None], Awaitable[None] | None]

# The ollama client drops response headers; a response hook running in the caller's task
# leaves Retry-After here so a 429 can still say how long to wait.
_retry_after: ContextVar[float | None] = ContextVar("ollama_retry_after", default=None)


async def _remember_retry_after(response: httpx.Response) -> None:
    if response.status_code == 429:
        _retry_after.set(parse_retry_after(response.headers))


def normalize_host(host: str | None) -> str:
    """One spelling per server (scheme, host, port) so two spellings share one pool."""
    raw = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).strip().rstrip("/")
    if "://" not in raw:
        raw = "http://" + raw
    url = urlparse(raw)
    name = url.hostname or "127.0.0.1"
    if name in ("0.0.0.0", "::"):  # a bind-all address; clients reach it on loopback
        name = "127.0.0.1"
    if ":" in name:
        name = f"[{name}]"
    port = url.port or (443 if url.scheme == "https" else 11434)
    return f"{url.scheme}://{name}:{port}{url.path}"


def _tagged(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


class OllamaBackend:
    """One model on one Ollama server; `endpoint` is the concurrency pool key."""

    def __init__(
        self,
        model: str,
        host: str | None = None,
        on_pull_progress: PullProgress | None = None,
        timeout: float = 300.0,
    ) -> None:
        self.model = model
        self.host = normalize_host(host)
        self.endpoint = "ollama:" + self.host
        self.timeout = timeout
        self.digest: str | None = None
        self._on_pull_progress = on_pull_progress
        self._ready = False
        self._ready_lock = asyncio.Lock()
        self._max_connections: int | None = None  # None: httpx's own limits (100, 20 kept)
        self._http: ollama.AsyncClient | None = None
        self._retired: list[ollama.AsyncClient] = []  # replaced clients, closed by aclose()

    @property
    def _client(self) -> ollama.AsyncClient:
        """Built on first use, so `limit_connections` can size its HTTP pool beforehand."""
        if self._http is None:
            kw: dict[str, Any] = {}
            if self._max_connections is not None:
                n = self._max_connections
                kw["limits"] = httpx.Limits(max_connections=n, max_keepalive_connections=n)
            self._http = ollama.AsyncClient(
                host=self.host,
                timeout=httpx.Timeout(self.timeout, connect=10.0),
                event_hooks={"response": [_remember_retry_after]},
                **kw,
            )
        return self._http

    def limit_connections(self, n: int) -> None:
        """Hold up to `n` connections open (the endpoint pool's size): httpx keeps only 20
        alive by default, so 32 calls at a time would reconnect for every twelfth call."""
        if n != self._max_connections:
            self._max_connections = n
            if self._http is not None:
                self._retired.append(self._http)
                self._http = None

    def options(self, params: GenerationParams) -> dict[str, Any]:
        """Ollama applies every field we have; max_tokens is called num_predict there."""
        mapping = {
            "temperature": params.temperature,
            "top_p": params.top_p,
            "top_k": params.top_k,
            "seed": params.seed,
            "num_predict": params.max_tokens,
            "num_ctx": params.num_ctx,
            "stop": params.stop,
            "repeat_penalty": params.repeat_penalty,
        }
        return {k: v for k, v in mapping.items() if v is not None}

    async def chat(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        error: Exception | None = None
        _retry_after.set(None)
        started = time.perf_counter()
        try:
            await self._ensure_model()
            started = time.perf_counter()
            resp = await self._client.chat(
                model=self.model,
                messages=[dict(m) for m in messages],
                options=self.options(params),
                stream=False,
            )
        except (
            ollama.ResponseError,
            ConnectionError,
            httpx.TransportError,
            json.JSONDecodeError,
            pydantic.ValidationError,
        ) as exc:
            error = self._map_error(exc)
        if error is not None:
            raise error  # outside the handler: no client internals ride along as __context__
        return Completion(
            text=resp.message.content or "",
            tokens_in=resp.prompt_eval_count,
            tokens_out=resp.eval_count,
            latency_s=time.perf_counter() - started,
            model_identity={
                "provider": "ollama",
                "host": self.host,
                "model": resp.model or self.model,
                "digest": self.digest,
            },
        )

    async def preflight(self) -> None:
        """Fail fast with one sentence naming the host and OLLAMA_HOST when it cannot work."""
        error: Exception | None = None
        wait_s = preflight_timeout_s()
        try:
            async with asyncio.timeout(wait_s):
                found, digest = await self._lookup()
        except (ConnectionError, httpx.TransportError, TimeoutError) as exc:
            error = FatalBackendError(
                "Ollama: " + describe(classify(exc), self.host, "OLLAMA_HOST", wait_s, START_OLLAMA)
            )
        except ollama.ResponseError as exc:
            error = FatalBackendError(
                f"Ollama at {self.host} answered HTTP {exc.status_code} ({_short(exc.error)}); "
                "check that OLLAMA_HOST points to an Ollama server."
            )
        except (json.JSONDecodeError, pydantic.ValidationError):
            error = FatalBackendError(
                f"The server at {self.host} does not speak the Ollama API; check OLLAMA_HOST."
            )
        if error is not None:
            raise error
        if found:  # a missing model is pulled by the first chat, with progress
            self.digest, self._ready = digest, True

    async def identity(self) -> dict:
        """The model's digest as the server lists it (pulled first when missing, as a chat
        would), in the shape a call's ledger row records."""
        await self._ensure_model()
        return {"provider": "ollama", "host": self.host, "model": self.model, "digest": self.digest}

    async def aclose(self) -> None:
        clients, self._retired = [*self._retired, self._http], []
        self._http = None
        for client in clients:
            if client is not None:
                await client.close()

    # -- model presence ---------------------------------------------------------------------------

    async def _lookup(self) -> tuple[bool, str | None]:
        tags = await self._client.list()
        for entry in tags.models:
            if entry.model and _tagged(entry.model) == _tagged(self.model):
                return True, entry.digest
        return False, None

    async def _ensure_model(self) -> None:
        if self._ready:
            return
        async with self._ready_lock:
            if self._ready:
                return
            found, digest = await self._lookup()
            if not found:
                await self._pull()
                found, digest = await self._lookup()
                if not found:
                    raise FatalBackendError(
                        f"Ollama at {self.host} reported pulling '{self.model}' but does not list "
                        "it; check the model name."
                    )
            self.digest, self._ready = digest, True

    async def _pull(self) -> None:
        try:
            async for part in await self._client.pull(self.model, stream=True):
                await self._progress(part.status or "", part.completed, part.total)
        except ollama.ResponseError as exc:
            if exc.status_code == -1 or 400 <= exc.status_code < 500:
                raise FatalBackendError(
                    f"Ollama at {self.host} could not pull model '{self.model}' "
                    f"({_short(exc.error)}); check the name at https://ollama.com/library."
                ) from None
            raise

    async def _progress(self, status: str, completed: int | None, total: int | None) -> None:
        if self._on_pull_progress is None:
            return
        result = self._on_pull_progress(status, completed, total)
        if inspect.isawaitable(result):
            await result

    def _map_error(self, exc: Exception) -> Exception:
        where = f"Ollama at {self.host}"
        if isinstance(exc, ollama.ResponseError):
            status = exc.status_code
            if status == 404:
                return FatalBackendError(
                    f"{where} has no model '{self.model}' (HTTP 404); run `ollama pull "
                    f"{self.model}` or check the name."
                )
            if status == 429:
                return RateLimitedError(
                    f"{where} is rate limiting requests (HTTP 429).", retry_after=_retry_after.get()
                )
            if status >= 500 or status == 408:
                return TransientBackendError(
                    f"{where} answered with server error HTTP {status}: {_short(exc.error)}"
                )
            return FatalBackendError(
                f"{where} rejected the request for model '{self.model}' (HTTP {status}): "
                f"{_short(exc.error)}"
            )
        if isinstance(exc, ConnectionError | httpx.TransportError):  # timeouts included
            sentence = describe(classify(exc), self.host, "OLLAMA_HOST", self.timeout, START_OLLAMA)
            return TransientBackendError(f"Ollama: {sentence}")
        if isinstance(exc, json.JSONDecodeError | pydantic.ValidationError):
            return TransientBackendError(f"{where} sent a malformed chat response.")
        return TransientBackendError(f"Call to {where} failed ({type(exc).__name__}).")


START_OLLAMA = "start Ollama with `ollama serve`"


def _short(text: object, limit: int = 200) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def create_backend(name: str, base_url: str | None = None, **kw: Any) -> OllamaBackend:
    """Registry factory for `ollama:NAME`; `base_url` is the Ollama host."""
    return OllamaBackend(
        name,
        host=base_url,
        on_pull_progress=kw.get("on_pull_progress"),
        timeout=kw.get("timeout", 300.0),
    )
