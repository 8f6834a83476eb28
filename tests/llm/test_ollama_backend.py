"""The real `ollama` client against the loopback stub: options, pull-once, digest, errors."""

from __future__ import annotations

import asyncio

import pytest

from simulator.domain.params import GenerationParams
from simulator.llm.base import FatalBackendError, RateLimitedError, TransientBackendError
from simulator.llm.ollama_backend import OllamaBackend, normalize_host
from simulator.llm.retry import EndpointPool, ResilientBackend, RetryPolicy
from simulator.testing.llm_stub_server import fake_digest

USER = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}]


@pytest.fixture
async def backend(stub_server):
    b = OllamaBackend("llama3", host=stub_server.url, timeout=0.5)
    yield b
    await b.aclose()


def paths(stub) -> list[str]:
    return [r.path for r in stub.requests]


async def test_options_reach_the_server(stub_server, backend):
    params = GenerationParams(
        temperature=0.2, top_p=0.8, top_k=20, max_tokens=99, seed=5, stop=["###"], num_ctx=8192
    )
    done = await backend.chat(USER, params)
    body = stub_server.chat_requests[-1].body
    assert body["options"] == {
        "temperature": 0.2,
        "top_p": 0.8,
        "top_k": 20,
        "seed": 5,
        "num_predict": 99,
        "num_ctx": 8192,
        "stop": ["###"],
    }
    assert body["stream"] is False and body["messages"] == USER
    assert done.ignored_params == []


async def test_tokens_and_digest_identity_come_back(stub_server, backend):
    stub_server.enqueue("Hello, short reply.")
    done = await backend.chat(USER, GenerationParams())
    assert done.text == "Hello, short reply."
    assert (done.tokens_in, done.tokens_out) == (4, 3)
    assert done.model_identity == {
        "provider": "ollama",
        "host": stub_server.url,
        "model": "llama3",
        "digest": fake_digest("llama3"),
    }
    assert backend.endpoint == "ollama:" + stub_server.url
    assert paths(stub_server) == ["/api/tags", "/api/chat"]  # installed: no pull


async def test_missing_model_is_pulled_once_with_progress_never_in_constructor(stub_server):
    seen: list[tuple[str, int | None, int | None]] = []

    async def progress(status: str, completed: int | None, total: int | None) -> None:
        seen.append((status, completed, total))

    b = OllamaBackend("mistral:7b", host=stub_server.url, on_pull_progress=progress)
    assert stub_server.requests == []  # the constructor contacts nothing
    try:
        results = await asyncio.gather(*[b.chat(USER, GenerationParams()) for _ in range(5)])
    finally:
        await b.aclose()
    assert paths(stub_server).count("/api/pull") == 1
    assert paths(stub_server)[:3] == ["/api/tags", "/api/pull", "/api/tags"]
    assert seen[-1] == ("success", None, None)
    assert any(total == 4000 and completed == 4000 for _, completed, total in seen)
    assert {r.model_identity["digest"] for r in results} == {fake_digest("mistral:7b")}


async def test_failed_pull_is_fatal_and_names_the_model(stub_server):
    stub_server.pullable = {"llama3"}
    b = OllamaBackend("no-such-model", host=stub_server.url)
    try:
        with pytest.raises(FatalBackendError, match=r"could not pull model 'no-such-model'"):
            await b.chat(USER, GenerationParams())
    finally:
        await b.aclose()


async def test_model_gone_at_chat_time_is_fatal_404(stub_server, backend):
    await backend.chat(USER, GenerationParams())
    stub_server.models = ["stub"]
    with pytest.raises(FatalBackendError, match=r"has no model 'llama3' \(HTTP 404\)"):
        await backend.chat(USER, GenerationParams())


@pytest.mark.parametrize("fault", ["500", "timeout", "drop", "malformed"])
async def test_transient_faults_are_retried_and_succeed(stub_server, backend, fault):
    stub_server.timeout_sleep_s = 0.8
    stub_server.enqueue_faults(fault)
    attempts = []
    resilient = ResilientBackend(backend, EndpointPool("t", 1), RetryPolicy.no_wait())
    done = await resilient.chat(USER, GenerationParams(), on_attempt=attempts.append)
    assert done.text.startswith("Reply 2 to: Hi there")
    assert [a.error_kind for a in attempts] == ["transient", None]
    assert isinstance(attempts[0].error, str) and stub_server.url in attempts[0].error


async def test_rate_limit_carries_retry_after_from_the_header(stub_server, backend):
    stub_server.retry_after_s = 7
    stub_server.enqueue_faults("429")
    with pytest.raises(RateLimitedError) as info:
        await backend.chat(USER, GenerationParams())
    assert info.value.retry_after == 7
    assert isinstance(info.value, TransientBackendError)


async def test_preflight_reachable_unreachable(stub_server, closed_port):
    b = OllamaBackend("llama3", host=stub_server.url)
    await b.preflight()
    await b.chat(USER, GenerationParams())
    await b.aclose()
    assert paths(stub_server) == ["/api/tags", "/api/chat"]  # preflight's check is reused

    down = OllamaBackend("llama3", host=f"127.0.0.1:{closed_port}")
    with pytest.raises(FatalBackendError) as info:
        await down.preflight()
    await down.aclose()
    message = str(info.value)
    assert f"http://127.0.0.1:{closed_port}" in message and "OLLAMA_HOST" in message


async def test_unreachable_host_during_chat_is_transient(closed_port):
    b = OllamaBackend("llama3", host=f"127.0.0.1:{closed_port}")
    with pytest.raises(TransientBackendError, match=r"Ollama: Nothing is listening at .*refused"):
        await b.chat(USER, GenerationParams())
    await b.aclose()


def test_host_comes_from_argument_env_or_default(monkeypatch):
    assert normalize_host(None) == "http://127.0.0.1:11434"
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0")
    assert normalize_host(None) == "http://127.0.0.1:11434"
    assert normalize_host("gpu-box:8080/") == "http://gpu-box:8080"
    assert normalize_host("https://ollama.example.com") == "https://ollama.example.com:443"
    assert OllamaBackend("x").endpoint == "ollama:http://127.0.0.1:11434"
