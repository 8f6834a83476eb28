"""OpenAI and any OpenAI-compatible server (vLLM, llama.cpp server, LM Studio, ...).

Why a wrapper: the engine needs one error vocabulary (fatal / transient / rate limited) and a
record of which sampling parameters really reached the model. Retries live in `retry.py`, so the
client is built with `max_retries=0`. The API key is never logged, stored or put in a message.
"""

from __future__ import annotations

import importlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import openai
import pydantic

from simulator.domain.params import GenerationParams
from simulator.llm.base import (
    ChatMessage,
    Completion,
    FatalBackendError,
    RateLimitedError,
    TransientBackendError,
)
from simulator.llm.endpoint_url import Endpoint, endpoint
from simulator.llm.lean_http import HttpReply, LeanPoster, LeanTransportError, lean_target
from simulator.llm.retry import parse_retry_after
from simulator.llm.transport import TransportKind, classify, describe, preflight_timeout_s
from simulator.settings import openai_base_url

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "sk-no-key-needed"  # local servers want some Bearer value, not a real one


def http_limits(n: int) -> Any:
    """Connection limits of `n` for the HTTP library this openai release is built on (httpx for
    1.x, httpx2 for 3.x): both name the class `Limits` in their top-level module."""
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
        self._lean: LeanPoster | bool | None = False  # False: not decided yet; None: not lean

    @property
    def _client(self) -> openai.AsyncOpenAI:
        """Built on first use, so `limit_connections` can size its HTTP pool beforehand."""
        if self._http is None:
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
            if isinstance(self._lean, LeanPoster):
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

    def _poster(self) -> LeanPoster | None:
        """The lean client for a plain-HTTP endpoint (llm/lean_http.py), built once with the
        headers the openai client sends; None where the openai client's own HTTP serves."""
        if self._lean is False:
            target = lean_target(self._endpoint.url + "/chat/completions", self._endpoint.query)
            if target is None:
                self._lean = None
            else:
                headers = {
                    name: value
                    for name, value in self._client.default_headers.items()
                    if isinstance(value, str)
                }
                headers["Authorization"] = f"Bearer {self._key}"
                self._lean = LeanPoster(*target, headers=headers, timeout=self.timeout)
                if self._max_connections is not None:
                    self._lean.max_idle = self._max_connections
        return self._lean or None

    async def _post_chat(self, body: dict) -> bytes:
        """The reply body of one chat completion; openai's errors as its own client raises."""
        poster = self._poster()
        if poster is None:
            return await self._client.post("/chat/completions", cast_to=bytes, body=body)
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        try:
            reply = await poster.post(data.encode())
        except LeanTransportError as exc:
            raise _LeanConnectionError(exc.kind) from None
        if not 200 <= reply.status < 300:
            raise self._client._make_status_error_from_response(_as_httpx(reply, poster))
        return reply.body

    async def chat(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        """One call posting the body as-is and reading the reply as JSON: the openai client's
        request transform and response models cost more CPU than the rest of a sweep's turn
        (see bench/sweep_cli.py); on plain HTTP, the lean client of llm/lean_http.py."""
        _, ignored = self.request_kwargs(params)
        body = self.request_body(messages, params)
        started = time.perf_counter()
        error: Exception | None = None
        try:
            raw = await self._post_chat(body)
            reply = parse_chat_completion(raw)
        except _LeanConnectionError as exc:
            error = TransientBackendError(
                describe(exc.kind, self.base_url, "OPENAI_BASE_URL", self.timeout)
            )
        except openai.OpenAIError as exc:
            error = self._map_error(exc)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            # json.JSONDecodeError is a ValueError
            error = TransientBackendError(
                f"{self.base_url} sent a malformed chat completion ({type(exc).__name__})."
            )
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
        client = self._client.with_options(timeout=wait_s)
        error: Exception | None = None
        try:
            page = await client.models.list()
        except openai.APIConnectionError as exc:  # APITimeoutError included
            error = FatalBackendError(
                describe(classify(exc), self.base_url, "OPENAI_BASE_URL", wait_s)
            )
        except openai.NotFoundError as exc:
            if self.official:
                error = self._map_error(exc)
            elif self._endpoint.path.endswith("/v1"):
                return  # a few compatible servers lack /models; the first chat will tell
            else:
                error = FatalBackendError(
                    f"{self._endpoint.shown_at('/models')} does not exist (HTTP 404); check "
                    "OPENAI_BASE_URL (OpenAI-compatible servers usually serve it under /v1)."
                )
        except openai.OpenAIError as exc:
            error = self._map_error(exc)
        except (json.JSONDecodeError, pydantic.ValidationError, AttributeError, TypeError):
            error = FatalBackendError(
                f"The server at {self.base_url} does not answer like an OpenAI-compatible API; "
                "check OPENAI_BASE_URL (it usually ends in /v1)."
            )
        if error is not None:
            raise error if isinstance(error, FatalBackendError) else FatalBackendError(str(error))
        if self.official and self.model not in {m.id for m in page.data}:
            raise FatalBackendError(
                f"Model '{self.model}' is not available at {self.base_url} for this "
                "OPENAI_API_KEY; check the model name."
            )

    async def aclose(self) -> None:
        if isinstance(self._lean, LeanPoster):
            await self._lean.aclose()
        self._lean = False
        clients, self._retired = [*self._retired, self._http], []
        self._http = None
        for client in clients:
            if client is not None:
                await client.close()

    def _map_error(self, exc: Exception) -> Exception:
        where = self.base_url
        if isinstance(exc, openai.AuthenticationError):
            return FatalBackendError(
                f"{where} rejected the API key (HTTP 401); set OPENAI_API_KEY to a valid key."
            )
        if isinstance(exc, openai.PermissionDeniedError):
            return FatalBackendError(
                f"{where} refused access to model '{self.model}' (HTTP 403); check that the "
                "OPENAI_API_KEY project may use it."
            )
        if isinstance(exc, openai.NotFoundError):
            return FatalBackendError(
                f"Model '{self.model}' was not found at {where} (HTTP 404); check the model "
                "name or OPENAI_BASE_URL."
            )
        if isinstance(exc, openai.RateLimitError):
            if getattr(exc, "code", None) == "insufficient_quota":
                return FatalBackendError(
                    f"{where} says the account behind OPENAI_API_KEY has no quota left (HTTP 429)."
                )
            return RateLimitedError(
                f"{where} is rate limiting requests (HTTP 429).",
                retry_after=parse_retry_after(exc.response.headers),
            )
        if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
            return FatalBackendError(
                f"{where} rejected the request for model '{self.model}' "
                f"(HTTP {exc.status_code}): {self._scrub(exc.message)}"
            )
        if isinstance(exc, openai.APIConnectionError):  # APITimeoutError included
            return TransientBackendError(
                describe(classify(exc), where, "OPENAI_BASE_URL", self.timeout)
            )
        if isinstance(exc, openai.APIResponseValidationError):
            return TransientBackendError(f"{where} sent a malformed chat completion.")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status >= 500 or status in (408, 409):
                return TransientBackendError(f"{where} answered with server error HTTP {status}.")
            return FatalBackendError(
                f"{where} refused the request (HTTP {status}): {self._scrub(exc.message)}"
            )
        return TransientBackendError(f"Call to {where} failed ({type(exc).__name__}).")

    def _scrub(self, text: str) -> str:
        """Server text may quote the key back; never let it into our messages."""
        text = str(text)
        if self._key and self._key != PLACEHOLDER_KEY:
            text = text.replace(self._key, "***")
        return text[:300]


class _LeanConnectionError(Exception):
    """The lean client's transport failure, by kind (llm/transport.py)."""

    def __init__(self, kind: TransportKind) -> None:
        super().__init__(kind)
        self.kind = kind


def _as_httpx(reply: HttpReply, poster: LeanPoster) -> Any:
    """An error reply as the httpx response the openai client makes its status errors from."""
    import httpx2

    request = httpx2.Request("POST", f"http://{poster.host}:{poster.port}/chat/completions")
    return httpx2.Response(reply.status, headers=reply.headers, content=reply.body, request=request)


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


def create_backend(name: str, base_url: str | None = None, **kw: Any) -> OpenAIBackend:
    """Registry factory for `openai:NAME`."""
    return OpenAIBackend(
        name, base_url=base_url, api_key=kw.get("api_key"), timeout=kw.get("timeout", 120.0)
    )
