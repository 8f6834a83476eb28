"""Retries and per-endpoint concurrency, as wrappers around any backend.

Why wrappers: backends only translate one call and classify its failure; how often to retry, how
long to wait and how many calls may be in flight are policy, shared across backends. A rate limit
pauses the whole endpoint pool (every caller of that server slows down), not just the call that
hit it. Every attempt, failed ones included, is reported through `on_attempt` so the engine can
keep a complete ledger of calls.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from simulator.domain.params import GenerationParams
from simulator.domain.providers import PROVIDERS
from simulator.llm.base import (
    Backend,
    ChatMessage,
    Completion,
    RateLimitedError,
    TransientBackendError,
)

ErrorKind = Literal["rate_limit", "transient", "fatal", "cancelled"]

DEFAULT_POOL_SIZES: Mapping[str, int] = MappingProxyType(
    {name: p.pool_size for name, p in PROVIDERS.items()}
)
FOLLOWS_CONCURRENCY = frozenset(name for name, p in PROVIDERS.items() if p.follows_concurrency)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `Retry-After` (number or HTTP date); None if absent."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class RetryPolicy(BaseModel):
    """How many attempts and how long to wait between them. Tests set the waits to zero."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(default=5, ge=1, le=100)
    initial_wait_s: float = Field(default=0.5, ge=0.0)
    max_wait_s: float = Field(default=30.0, ge=0.0)
    jitter: bool = True
    max_retry_after_s: float = Field(default=300.0, ge=0.0)  # cap on what a server may demand

    @classmethod
    def no_wait(cls, max_attempts: int = 5) -> RetryPolicy:
        return cls(max_attempts=max_attempts, initial_wait_s=0.0, max_wait_s=0.0, jitter=False)

    def backoff(self, attempt: int) -> float:
        """Exponential backoff after attempt `attempt` (1-based), with equal jitter."""
        base = min(self.max_wait_s, self.initial_wait_s * 2 ** (attempt - 1))
        return random.uniform(base / 2, base) if self.jitter else base

    def delay_after(self, attempt: int, error: BaseException) -> float:
        """The server's Retry-After wins when it asks for longer than our backoff."""
        wait = self.backoff(attempt)
        if isinstance(error, RateLimitedError) and error.retry_after is not None:
            wait = max(wait, min(error.retry_after, self.max_retry_after_s))
        return wait


class EndpointPool:
    """At most `size` calls in flight to one endpoint, and a shared pause after a rate limit."""

    def __init__(self, key: str, size: int, source: str = "default") -> None:
        if size < 1:
            raise ValueError(f"pool size for {key} must be at least 1, got {size}")
        self.key = key
        self.size = size
        self.source = source  # why this size: "--pool", "--concurrency" or "default"
        self.in_flight = 0
        self.pauses = 0
        self._paused_until = 0.0
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def paused_for(self) -> float:
        return max(0.0, self._paused_until - time.monotonic())

    def pause(self, seconds: float) -> None:
        """Hold every new call to this endpoint for `seconds` (extends, never shortens)."""
        until = time.monotonic() + seconds
        if seconds > 0 and until > self._paused_until:
            self._paused_until = until
            self.pauses += 1

    async def wait_until_open(self) -> None:
        while (remaining := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(remaining)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self.wait_until_open()  # do not hold a slot only to sleep in it
        async with self._semaphore():
            await self.wait_until_open()  # a pause may have begun while we queued
            self.in_flight += 1
            try:
                yield
            finally:
                self.in_flight -= 1

    def _semaphore(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop; a CLI or test suite may run several in turn.
        loop = asyncio.get_running_loop()
        if self._sem is None or self._loop is not loop:
            self._sem, self._loop = asyncio.Semaphore(self.size), loop
        return self._sem


@dataclass(frozen=True)
class Attempt:
    """One try at a call, successful or not, for the ledger."""

    number: int
    completion: Completion | None
    error: str | None
    error_kind: ErrorKind | None
    latency_s: float
    started_at: datetime  # naive UTC, millisecond precision (the store's convention)
    waited_s: float = 0.0  # time spent queued for the pool or a rate-limit pause


OnAttempt = Callable[[Attempt], Awaitable[None] | None]


@runtime_checkable
class AttemptLedger(Protocol):
    """An `on_attempt` that also wants to know when a request is about to leave, so that a
    call in flight when the process dies is still on record (with no response)."""

    def begin(self, number: int, started_at: datetime) -> Awaitable[None] | None: ...

    def __call__(self, attempt: Attempt) -> Awaitable[None] | None: ...


async def _begin(on_attempt: OnAttempt | None, number: int, started_at: datetime) -> None:
    """Let a ledger store the attempt as in flight; its store errors are not the model's."""
    if isinstance(on_attempt, AttemptLedger):
        began = on_attempt.begin(number, started_at)
        if inspect.isawaitable(began):
            await began


def _report_cancelled(
    on_attempt: OnAttempt | None, number: int, started_at: datetime, waited_s: float, t0: float
) -> None:
    if on_attempt is None:
        return
    result = on_attempt(
        Attempt(
            number=number,
            completion=None,
            error="cancelled before the reply arrived",
            error_kind="cancelled",
            latency_s=time.perf_counter() - t0,
            started_at=started_at,
            waited_s=waited_s,
        )
    )
    if inspect.iscoroutine(result):
        result.close()  # no awaiting inside a cancellation


def error_kind(exc: BaseException) -> ErrorKind:
    if isinstance(exc, RateLimitedError):
        return "rate_limit"
    if isinstance(exc, TransientBackendError):
        return "transient"
    return "fatal"


def _utc_now_ms() -> datetime:
    now = datetime.now(UTC).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


class ResilientBackend:
    """A backend behind a pool and a retry policy; same `chat` plus an `on_attempt` hook."""

    def __init__(
        self, backend: Backend, pool: EndpointPool, policy: RetryPolicy | None = None
    ) -> None:
        self.backend = backend
        self.pool = pool
        self.policy = policy or RetryPolicy()
        self.model = backend.model
        self.endpoint = backend.endpoint
        # the URL actually called (OpenAI-compatible base URL, Ollama host); None in-process
        self.base_url: str | None = getattr(backend, "base_url", None) or getattr(
            backend, "host", None
        )

    async def chat(
        self,
        messages: list[ChatMessage],
        params: GenerationParams,
        on_attempt: OnAttempt | None = None,
    ) -> Completion:
        next_wait = [0.0]  # set by the failed attempt, read by tenacity's wait

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.policy.max_attempts),
            retry=retry_if_exception_type(TransientBackendError),
            wait=lambda _state: next_wait[0],
            reraise=True,
        )
        completion: Completion | None = None
        async for attempt in retrying:
            with attempt:
                completion = await self._attempt(
                    attempt.retry_state, messages, params, on_attempt, next_wait
                )
        assert completion is not None
        return completion

    async def _attempt(
        self,
        state: RetryCallState,
        messages: list[ChatMessage],
        params: GenerationParams,
        on_attempt: OnAttempt | None,
        next_wait: list[float],
    ) -> Completion:
        number = state.attempt_number
        queued = time.perf_counter()
        error: Exception | None = None
        completion: Completion | None = None
        async with self.pool.slot():
            started_at, t0 = _utc_now_ms(), time.perf_counter()
            try:
                await _begin(on_attempt, number, started_at)  # stored before the request leaves
                try:
                    completion = await self.backend.chat(messages, params)
                except Exception as exc:
                    error = exc
            except asyncio.CancelledError:
                # Ctrl-C or a lost lease: the request is abandoned (its HTTP stream closed by
                # the cancellation); the ledger row says so rather than staying "in flight".
                _report_cancelled(on_attempt, number, started_at, t0 - queued, t0)
                raise
            latency = time.perf_counter() - t0
        if error is not None:
            next_wait[0] = self.policy.delay_after(number, error)
            if isinstance(error, RateLimitedError):
                self.pool.pause(next_wait[0])
        record = Attempt(
            number=number,
            completion=completion,
            error=(str(error) or type(error).__name__) if error else None,
            error_kind=error_kind(error) if error else None,
            latency_s=latency,
            started_at=started_at,
            waited_s=t0 - queued,
        )
        if on_attempt is not None:
            result = on_attempt(record)
            if inspect.isawaitable(result):
                await result
        if error is not None:
            raise error
        assert completion is not None
        return completion

    async def preflight(self) -> None:
        check = getattr(self.backend, "preflight", None)
        if check is not None:
            await check()

    async def identity(self) -> dict | None:
        """The backend's model identity before any call (None: only its replies tell)."""
        look = getattr(self.backend, "identity", None)
        return None if look is None else await look()

    async def aclose(self) -> None:
        await self.backend.aclose()


class PoolRegistry:
    """One pool per endpoint key; sizes by exact endpoint, else by provider prefix.

    `sizes` are the user's (`--pool`); `concurrency` is the conversations a sweep runs at once,
    which network providers' pools follow unless `sizes` names them. A backend that keeps an
    HTTP connection pool gets the same size (`limit_connections`), so the client library's own
    limit cannot cap what the endpoint pool allows. `on_open` hears about each pool as it is
    made, so the caller can say what size it got and why.
    """

    def __init__(
        self,
        sizes: Mapping[str, int] | None = None,
        default_size: int = 4,
        *,
        concurrency: int | None = None,
        on_open: Callable[[EndpointPool], None] | None = None,
    ) -> None:
        self._explicit = dict(sizes or {})
        self._sizes = {**DEFAULT_POOL_SIZES, **self._explicit}
        self._default = default_size
        self._concurrency = concurrency
        self._on_open = on_open
        self._pools: dict[str, EndpointPool] = {}

    def size_for(self, endpoint: str) -> int:
        return self.sizing(endpoint)[0]

    def sizing(self, endpoint: str) -> tuple[int, str]:
        """(size, source): the user's `--pool`, else the sweep's concurrency, else a default."""
        provider = endpoint.split(":", 1)[0]
        for key in (endpoint, provider):
            if key in self._explicit:
                return self._explicit[key], "--pool"
        if self._concurrency is not None and provider in FOLLOWS_CONCURRENCY:
            return max(1, self._concurrency), "--concurrency"
        if endpoint in self._sizes:
            return self._sizes[endpoint], "default"
        return self._sizes.get(provider, self._default), "default"

    def pool_for(self, endpoint: str) -> EndpointPool:
        pool = self._pools.get(endpoint)
        if pool is None:
            size, source = self.sizing(endpoint)
            pool = self._pools[endpoint] = EndpointPool(endpoint, size, source)
            if self._on_open is not None:
                self._on_open(pool)
        return pool

    def wrap(self, backend: Backend, policy: RetryPolicy | None = None) -> ResilientBackend:
        pool = self.pool_for(backend.endpoint)
        limit = getattr(backend, "limit_connections", None)
        if callable(limit):
            limit(pool.size)
        return ResilientBackend(backend, pool, policy)

    @property
    def pools(self) -> dict[str, EndpointPool]:
        return dict(self._pools)
