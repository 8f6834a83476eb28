"""Retry policy, pools and the attempt ledger hook."""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate

import pytest

from simulator.domain.params import GenerationParams
from simulator.llm.base import (
    Completion,
    FatalBackendError,
    RateLimitedError,
    TransientBackendError,
)
from simulator.llm.mock_backend import MockBackend
from simulator.llm.openai_backend import OpenAIBackend
from simulator.llm.retry import (
    Attempt,
    EndpointPool,
    PoolRegistry,
    ResilientBackend,
    RetryPolicy,
    parse_retry_after,
)

USER = [{"role": "user", "content": "hello"}]
P = GenerationParams()


def test_backoff_doubles_caps_and_jitters():
    plain = RetryPolicy(initial_wait_s=0.5, max_wait_s=3, jitter=False)
    assert [plain.backoff(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1, 2, 3, 3]
    jittered = RetryPolicy(initial_wait_s=1, max_wait_s=30)
    assert all(2 <= jittered.backoff(3) <= 4 for _ in range(50))
    assert plain.delay_after(1, RateLimitedError("x", retry_after=9)) == 9
    assert plain.delay_after(4, RateLimitedError("x", retry_after=None)) == 3
    assert RetryPolicy(max_retry_after_s=5).delay_after(1, RateLimitedError("x", 600)) == 5
    assert RetryPolicy.no_wait().backoff(3) == 0


def test_parse_retry_after_forms():
    assert parse_retry_after({"retry-after": "2"}) == 2
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert 8 <= parse_retry_after({"retry-after": formatdate(time.time() + 10, usegmt=True)}) <= 10
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


async def test_transient_errors_are_retried_and_every_attempt_reported():
    mock = MockBackend("m")
    mock.enqueue(TransientBackendError("boom"), RateLimitedError("slow", retry_after=0), "ok")
    attempts: list[Attempt] = []

    async def record(a: Attempt) -> None:  # async hooks are awaited
        attempts.append(a)

    r = ResilientBackend(mock, EndpointPool("mock:m", 4), RetryPolicy.no_wait())
    done = await r.chat(USER, P, on_attempt=record)
    assert done.text == "ok"
    assert [(a.number, a.error_kind) for a in attempts] == [
        (1, "transient"),
        (2, "rate_limit"),
        (3, None),
    ]
    assert attempts[0].error == "boom" and attempts[0].completion is None
    assert attempts[2].completion == done and attempts[2].error is None
    assert attempts[0].started_at.tzinfo is None and attempts[0].started_at.microsecond % 1000 == 0
    assert (r.model, r.endpoint) == ("m", "mock:m")


async def test_fatal_errors_are_not_retried():
    mock = MockBackend("m")
    mock.enqueue(FatalBackendError("bad key"), "never reached")
    attempts: list[Attempt] = []
    r = ResilientBackend(mock, EndpointPool("k", 1), RetryPolicy.no_wait())
    with pytest.raises(FatalBackendError, match="bad key"):
        await r.chat(USER, P, on_attempt=attempts.append)
    assert len(mock.calls) == 1 and [a.error_kind for a in attempts] == ["fatal"]


async def test_last_error_is_reraised_after_max_attempts():
    mock = MockBackend("m")
    mock.enqueue(*[TransientBackendError(f"fail {i}") for i in range(1, 4)], "too late")
    attempts: list[Attempt] = []
    r = ResilientBackend(mock, EndpointPool("k", 1), RetryPolicy.no_wait(max_attempts=3))
    with pytest.raises(TransientBackendError, match="fail 3"):
        await r.chat(USER, P, on_attempt=attempts.append)
    assert [a.number for a in attempts] == [1, 2, 3]


async def test_backoff_waits_between_attempts():
    mock = MockBackend("m")
    mock.enqueue(TransientBackendError("x"), TransientBackendError("y"), "ok")
    policy = RetryPolicy(initial_wait_s=0.05, max_wait_s=1, jitter=False)
    t0 = time.monotonic()
    await ResilientBackend(mock, EndpointPool("k", 1), policy).chat(USER, P)
    assert time.monotonic() - t0 >= 0.15  # 0.05 + 0.1


class _Counting:
    """Wraps a backend and records the highest number of concurrent calls."""

    def __init__(self, inner: MockBackend) -> None:
        self.inner, self.model, self.endpoint = inner, inner.model, inner.endpoint
        self.now = self.peak = 0

    async def chat(self, messages, params) -> Completion:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            return await self.inner.chat(messages, params)
        finally:
            self.now -= 1

    async def aclose(self) -> None:
        pass


async def test_pool_limits_concurrency():
    counting = _Counting(MockBackend("m", latency_s=0.02))
    r = ResilientBackend(counting, EndpointPool("k", 3), RetryPolicy.no_wait())
    await asyncio.gather(*[r.chat(USER, P) for _ in range(12)])
    assert counting.peak == 3


def _record_pauses(pool: EndpointPool) -> list[float]:
    """The lengths of the pauses asked of `pool`, in order."""
    asked: list[float] = []
    pause = pool.pause

    def recorded(seconds: float) -> None:
        asked.append(seconds)
        pause(seconds)

    pool.pause = recorded  # type: ignore[method-assign]
    return asked


def _on_rate_limit(event: asyncio.Event):
    """An `on_attempt` that sets `event` once an attempt was rate-limited (the pool's pause is
    set before the attempt is reported)."""

    def seen(attempt: Attempt) -> None:
        if attempt.error_kind == "rate_limit":
            event.set()

    return seen


async def test_rate_limit_pauses_the_whole_pool_mock():
    mock = MockBackend("m")
    mock.enqueue(RateLimitedError("slow down", retry_after=0.3))
    pool = EndpointPool("mock:m", 8)
    r = ResilientBackend(mock, pool, RetryPolicy.no_wait())
    asked = _record_pauses(pool)
    limited = asyncio.Event()
    first = asyncio.create_task(r.chat(USER, P, on_attempt=_on_rate_limit(limited)))
    await limited.wait()  # the 429 has arrived; the pool is paused
    before, remaining = time.monotonic(), pool.paused_for
    assert 0 < remaining <= 0.3
    await r.chat(USER, P)  # an unrelated call
    assert time.monotonic() >= before + remaining  # it returned only after the pause ended
    await first
    assert pool.pauses == 1 and len(mock.calls) == 3 and asked == [0.3]


async def test_retry_after_from_a_real_429_pauses_a_concurrent_call(stub_server):
    """Two conversations share an endpoint; one gets HTTP 429 Retry-After: 0.4."""
    stub_server.retry_after_s = 0.4
    stub_server.enqueue_faults("429")
    registry = PoolRegistry()
    backend = OpenAIBackend("stub", base_url=stub_server.openai_base_url)
    r = registry.wrap(backend, RetryPolicy.no_wait())
    kinds: list[str | None] = []
    limited = asyncio.Event()
    pool = registry.pool_for(backend.endpoint)
    asked = _record_pauses(pool)

    def first_attempts(attempt: Attempt) -> None:
        kinds.append(attempt.error_kind)
        _on_rate_limit(limited)(attempt)

    try:
        a = asyncio.create_task(r.chat(USER, P, on_attempt=first_attempts))
        await limited.wait()  # the 429 has come back; the pool is paused
        before, remaining = time.monotonic(), pool.paused_for
        assert 0 < remaining <= 0.4
        await r.chat(USER, P)
        await a
    finally:
        await backend.aclose()
    received = [req.received_at for req in stub_server.chat_requests]
    # the stub stamps each request with the same monotonic clock the pause is kept on: neither
    # the retry nor the concurrent call left before the pause's end
    assert len(received) == 3 and min(received[1:]) >= before + remaining
    assert kinds == ["rate_limit", None]
    assert registry.pool_for(backend.endpoint).pauses == 1 and asked == [0.4]


def test_pool_registry_sizes_and_identity():
    reg = PoolRegistry({"ollama": 2, "openai:http://vllm:8000/v1": 64})
    assert reg.pool_for("mock:a").size == 64 and reg.pool_for("local:smollm2").size == 1
    assert reg.pool_for("hf:/m").size == 32 and reg.pool_for("openai:x").size == 16
    assert reg.pool_for("ollama:http://a:11434").size == 2
    assert reg.pool_for("openai:http://vllm:8000/v1").size == 64
    assert reg.pool_for("ollama:http://a:11434") is reg.pool_for("ollama:http://a:11434")
    assert reg.pool_for("ollama:http://a:11434") is not reg.pool_for("ollama:http://b:11434")
    assert reg.pool_for("weird:x").size == 4
    assert set(reg.pools) >= {"mock:a", "ollama:http://b:11434"}
    with pytest.raises(ValueError):
        EndpointPool("k", 0)


def test_a_pool_survives_successive_event_loops():
    r = PoolRegistry().wrap(MockBackend("m"), RetryPolicy.no_wait())

    async def two() -> list[Completion]:
        return await asyncio.gather(r.chat(USER, P), r.chat(USER, P))

    assert len(asyncio.run(two())) == 2
    assert len(asyncio.run(two())) == 2
