"""OpenAI and any OpenAI-compatible server (vLLM, llama.cpp server, LM Studio, ...).

Why a wrapper: the engine needs one error vocabulary (fatal / transient / rate limited) and a
record of which sampling parameters really reached the model. Retries live in `retry.py`, so the
client is built with `max_retries=0`. The API key is never logged, stored or put in a message.

A plain-HTTP server (vLLM, llama.cpp, LM Studio on a local network) is called through the lean
client of llm/lean_http.py and the openai package is not even imported unless an error reply
needs its error making; HTTPS, proxies and URL credentials go through the openai client.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pydantic

from simulator.domain.params import GenerationParams
from simulator.llm.base import (
    ChatMessage,
    Completion,
    FatalBackendError,
    TransientBackendError,
)
from simulator.llm.endpoint_url import Endpoint, endpoint
from simulator.llm.lean_http import LeanClient
from simulator.llm.openai_errors import map_openai_error
from simulator.llm.openai_lean import (
    LeanConnectionError,
    LeanStatusError,
    lean_client,
    parse_chat_completion,
)
from simulator.llm.openai_lean import call as lean_call
from simulator.llm.openai_lean import status_error as lean_status_error
from simulator.llm.transport import classify, describe, preflight_timeout_s
from simulator.settings import openai_base_url

if TYPE_CHECKING:
    import openai

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "sk-no-key-needed"  # local servers want some Bearer value, not a real one


def http_limits(n: int) -> Any:
    """Connection limits of `n` for the HTTP library this openai release is built on (httpx for
    1.x, httpx2 for 3.x): both name the class `Limits` in their top-level module."""
    import openai

    client_cls = next(
        c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient"
    )
    library = importlib.import_module(client_cls.__module__.split(".", 1)[0])
    return library.Limits(max_connections=n, max_keepalive_connections=n)


def resolve_base_url(base_url: str | None) -> str:
    url = base_url or openai_base_url() or OFFICIAL_BASE_URL
    return url.rstrip("/")


def resolve_endpoint(base_url: str | None) -> Endpoint:
    """The endpoint to call: `base_url`, else OPENAI_BASE_URL, else the OpenAI API; `${VAR}`
    references filled in, the query kept apart (llm/endpoint_url.py)."""
    source = "base_url" if base_url else "OPENAI_BASE_URL"
    return endpoint(resolve_base_url(base_url), source)


def is_official(base_url: str) -> bool:
    return (urlparse(base_url).hostname or "").lower() == "api.openai.com"


class OpenAIBackend:
    """Chat completions over HTTP; `endpoint` is the concurrency pool key."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.model = model
        self._endpoint = resolve_endpoint(base_url)
        self.base_url = self._endpoint.shown  # safe to show, log and record
        self.official = is_official(self.base_url)
        self.endpoint = "openai:" + self.base_url
        self.timeout = timeout
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and self.official:
            raise FatalBackendError(
                "OPENAI_API_KEY is not set; export it (or put it in .env) to use the OpenAI API, "
                "or set OPENAI_BASE_URL to an OpenAI-compatible server."
            )
        self._key = key or PLACEHOLDER_KEY
        self._max_connections: int | None = None  # None: the client library's own limits
        self._http: openai.AsyncOpenAI | None = None
        self._retired: list[openai.AsyncOpenAI] = []  # replaced clients, closed by aclose()
        self._lean: LeanClient | bool | None = False  # False: not decided yet; None: not lean

    @property
    def _client(self) -> openai.AsyncOpenAI:
        """Built on first use, so `limit_connections` can size its HTTP pool beforehand."""
        if self._http is None:
            import openai

            kw: dict[str, Any] = {}
            if self._max_connections is not None:
                kw["http_client"] = openai.DefaultAsyncHttpxClient(
                    limits=http_limits(self._max_connections), timeout=self.timeout
                )
            self._http = openai.AsyncOpenAI(
                api_key=self._key,
                base_url=self._endpoint.url,
                default_query=self._endpoint.query or None,
                timeout=self.timeout,
                max_retries=0,
                **kw,
            )
        return self._http

    def limit_connections(self, n: int) -> None:
        """Hold up to `n` connections open (the endpoint pool's size): neither a cap below the
        pool nor a reconnect per call once more than the library's keep-alive limit run."""
        if n != self._max_connections:
            self._max_connections = n
            if isinstance(self._lean, LeanClient):
                self._lean.max_idle = n
            if self._http is not None:  # not yet used in practice: the registry sizes it first
                old, self._http = self._http, None
                self._retired.append(old)

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    def request_kwargs(self, params: GenerationParams) -> tuple[dict[str, Any], list[str]]:
        """Map our params onto the chat.completions call; returns (kwargs, ignored names)."""
        kw: dict[str, Any] = {}
        ignored: list[str] = []
        for name in ("temperature", "top_p", "seed", "stop"):
            value = getattr(params, name)
            if value is not None:
                kw[name] = value
        if params.max_tokens is not None:
            # The official API rejects max_tokens for reasoning models; compatible servers
            # (vLLM, llama.cpp, LM Studio) know only max_tokens.
            kw["max_completion_tokens" if self.official else "max_tokens"] = params.max_tokens
        extra = {
            name: getattr(params, name)
            for name in ("top_k", "repeat_penalty")
            if getattr(params, name) is not None
        }
        if self.official:
            ignored += list(extra)  # the OpenAI service has neither
        elif extra:
            kw["extra_body"] = extra  # vLLM, llama.cpp server and LM Studio read these
        if params.num_ctx is not None:
            ignored.append("num_ctx")
        return kw, ignored

    def request_body(self, messages: list[ChatMessage], params: GenerationParams) -> dict:
        """The JSON body of one chat completion, exactly as the server receives it."""
        kw, _ = self.request_kwargs(params)
        extra = kw.pop("extra_body", None) or {}
        return {"model": self.model, "messages": [dict(m) for m in messages], **kw, **extra}

    def _lean_client(self) -> LeanClient | None:
        """The lean client for a plain-HTTP endpoint (openai_lean.py), built once; None where
        the openai client's own HTTP serves."""
        if self._lean is False:
            self._lean = lean_client(self._endpoint, self._key, self.timeout)
            if self._lean is not None and self._max_connections is not None:
                self._lean.max_idle = self._max_connections
        return self._lean or None

    async def _request(self, path: str, body: dict | None = None, wait_s: float | None = None):
        """The reply of one POST (with `body`) or GET, as bytes from the lean client, else as
        the openai client returns it; errors as the openai client raises them, or
        LeanConnectionError."""
        lean = self._lean_client()
        if lean is not None:
            try:
                return await lean_call(lean, "GET" if body is None else "POST", path, body, wait_s)
            except LeanStatusError as exc:
                error = lean_status_error(self._client, exc)
            raise error
        client = self._client if wait_s is None else self._client.with_options(timeout=wait_s)
        if body is None:
            return await client.models.list()
        return await client.post(path, cast_to=bytes, body=body)

    async def chat(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        """One call posting the body as-is and reading the reply as JSON: the openai client's
        request transform and response models cost more CPU than the rest of a sweep's turn
        (see bench/sweep_cli.py); on plain HTTP, the lean client of llm/lean_http.py."""
        _, ignored = self.request_kwargs(params)
        body = self.request_body(messages, params)
        started = time.perf_counter()
        error: Exception | None = None
        try:
            reply = parse_chat_completion(await self._request("/chat/completions", body))
        except LeanConnectionError as exc:
            error = TransientBackendError(
                describe(exc.kind, self.base_url, "OPENAI_BASE_URL", self.timeout)
            )
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            # json.JSONDecodeError is a ValueError
            error = TransientBackendError(
                f"{self.base_url} sent a malformed chat completion ({type(exc).__name__})."
            )
        except Exception as exc:
            if not _is_openai_error(exc):
                raise
            error = self._map_error(exc)
        if error is not None:
            # Raised outside the except block: the client's exception (whose request carries
            # the Authorization header) must not ride along as __context__.
            raise error
        identity = {
            "provider": "openai",
            "base_url": self.base_url,
            "model": reply.model,
            "system_fingerprint": reply.system_fingerprint,
        }
        return Completion(
            text=reply.text,
            tokens_in=reply.tokens_in,
            tokens_out=reply.tokens_out,
            latency_s=time.perf_counter() - started,
            model_identity=identity,
            ignored_params=ignored,
        )

    async def preflight(self) -> None:
        """Fail fast, before anything is written, when the server or key cannot work."""
        wait_s = preflight_timeout_s()
        error: Exception | None = None
        try:
            page = await self._request("/models", wait_s=wait_s)
            if isinstance(page, bytes):  # the lean client's: a JSON object, as the client reads
                try:
                    listed = json.loads(page)
                except ValueError:
                    listed = None
                if not isinstance(listed, dict):
                    raise TypeError("not a list of models")
        except Exception as exc:
            error = self._preflight_error(exc, wait_s)
            if error is None:
                return  # a few compatible servers lack /models; the first chat will tell
        if error is not None:
            raise error if isinstance(error, FatalBackendError) else FatalBackendError(str(error))
        if self.official and self.model not in {m.id for m in page.data}:
            raise FatalBackendError(
                f"Model '{self.model}' is not available at {self.base_url} for this "
                "OPENAI_API_KEY; check the model name."
            )

    def _preflight_error(self, exc: Exception, wait_s: float) -> Exception | None:
        """What a failed preflight says (None: a missing /models the first chat will judge);
        `exc` itself when it is nothing a server's answer explains."""
        if isinstance(exc, LeanConnectionError):
            return FatalBackendError(describe(exc.kind, self.base_url, "OPENAI_BASE_URL", wait_s))
        if _is_openai_error(exc):
            import openai

            if isinstance(exc, openai.APIConnectionError):  # APITimeoutError included
                kind = classify(exc)
                return FatalBackendError(describe(kind, self.base_url, "OPENAI_BASE_URL", wait_s))
            if not isinstance(exc, openai.NotFoundError) or self.official:
                return self._map_error(exc)
            if self._endpoint.path.endswith("/v1"):
                return None
            return FatalBackendError(
                f"{self._endpoint.shown_at('/models')} does not exist (HTTP 404); check "
                "OPENAI_BASE_URL (OpenAI-compatible servers usually serve it under /v1)."
            )
        if isinstance(exc, json.JSONDecodeError | pydantic.ValidationError | AttributeError):
            exc = TypeError(str(exc))
        if isinstance(exc, TypeError):
            return FatalBackendError(
                f"The server at {self.base_url} does not answer like an OpenAI-compatible API; "
                "check OPENAI_BASE_URL (it usually ends in /v1)."
            )
        raise exc  # nothing a server's answer explains

    async def aclose(self) -> None:
        if isinstance(self._lean, LeanClient):
            await self._lean.aclose()
        self._lean = False
        clients, self._retired = [*self._retired, self._http], []
        self._http = None
        for client in clients:
            if client is not None:
                await client.close()

    def _map_error(self, exc: Exception) -> Exception:
        return map_openai_error(exc, self.base_url, self.model, self.timeout, self._scrub)

    def _scrub(self, text: str) -> str:
        """Server text may quote the key back; never let it into our messages."""
        text = str(text)
        if self._key and self._key != PLACEHOLDER_KEY:
            text = text.replace(self._key, "***")
        return text[:300]


def _is_openai_error(exc: BaseException) -> bool:
    """Whether `exc` is the openai package's (never, while it is not even imported)."""
    module = sys.modules.get("openai")
    return module is not None and isinstance(exc, module.OpenAIError)


def create_backend(name: str, base_url: str | None = None, **kw: Any) -> OpenAIBackend:
    """Registry factory for `openai:NAME`."""
    return OpenAIBackend(
        name, base_url=base_url, api_key=kw.get("api_key"), timeout=kw.get("timeout", 120.0)
    )
