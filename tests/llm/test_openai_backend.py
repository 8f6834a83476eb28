"""The real `openai` client against the loopback stub: parameters, tokens, identity, errors."""

from __future__ import annotations

import pytest

from simulator.domain.params import GenerationParams
from simulator.llm.base import FatalBackendError, RateLimitedError, TransientBackendError
from simulator.llm.openai_backend import OFFICIAL_BASE_URL, PLACEHOLDER_KEY, OpenAIBackend
from simulator.llm.retry import EndpointPool, ResilientBackend, RetryPolicy

USER = [{"role": "user", "content": "Who are you?"}]
SECRET = "sk-test-SECRET-do-not-leak-1234"


@pytest.fixture
async def backend(stub_server):
    b = OpenAIBackend("stub", base_url=stub_server.openai_base_url, timeout=0.5)
    yield b
    await b.aclose()


async def test_sampling_parameters_reach_the_server(stub_server, backend):
    params = GenerationParams(
        temperature=0.7, top_p=0.9, top_k=40, max_tokens=64, seed=11, stop=["\nUser:"], num_ctx=4096
    )
    done = await backend.chat(USER, params)
    body = stub_server.chat_requests[-1].body
    assert body["temperature"] == 0.7 and body["top_p"] == 0.9 and body["seed"] == 11
    assert body["max_tokens"] == 64 and body["stop"] == ["\nUser:"]
    assert body["top_k"] == 40  # via extra_body, for compatible servers
    assert "num_ctx" not in body and done.ignored_params == ["num_ctx"]
    assert body["messages"] == USER


async def test_tokens_text_and_identity_come_back(stub_server, backend):
    stub_server.enqueue("I am the stub.")
    done = await backend.chat(USER, GenerationParams())
    assert done.text == "I am the stub."
    assert (done.tokens_in, done.tokens_out) == (3, 4)
    assert done.latency_s > 0
    assert done.model_identity == {
        "provider": "openai",
        "base_url": stub_server.openai_base_url,
        "model": "stub",
        "system_fingerprint": "fp_stub",
    }
    assert backend.endpoint == "openai:" + stub_server.openai_base_url


async def test_base_url_and_key_from_environment(stub_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", stub_server.openai_base_url + "/")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    stub_server.require_api_key = SECRET
    b = OpenAIBackend("stub")
    try:
        assert b.base_url == stub_server.openai_base_url
        assert (await b.chat(USER, GenerationParams())).text.startswith("Reply 1")
        assert SECRET not in repr(b)
    finally:
        await b.aclose()


def test_official_service_needs_a_key_and_maps_params_differently(monkeypatch):
    with pytest.raises(FatalBackendError, match="OPENAI_API_KEY is not set"):
        OpenAIBackend("gpt-4o-mini")
    b = OpenAIBackend("gpt-4o-mini", api_key=SECRET)
    assert b.official and b.endpoint == "openai:" + OFFICIAL_BASE_URL
    kw, ignored = b.request_kwargs(GenerationParams(top_k=5, max_tokens=10, num_ctx=2048))
    assert kw == {"max_completion_tokens": 10} and ignored == ["top_k", "num_ctx"]


async def test_custom_server_needs_no_key(stub_server):
    """With no key anywhere, a compatible server gets the fixed placeholder as its Bearer value
    (some servers want one), never an empty header or a key from somewhere else."""
    stub_server.require_api_key = PLACEHOLDER_KEY  # any other Authorization is answered 401
    b = OpenAIBackend("stub", base_url=stub_server.openai_base_url)
    try:
        done = await b.chat(USER, GenerationParams())
    finally:
        await b.aclose()
    assert done.text.startswith("Reply 1 to:")
    assert len(stub_server.chat_requests) == 1


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("500", TransientBackendError),
        ("timeout", TransientBackendError),
        ("drop", TransientBackendError),
        ("malformed", TransientBackendError),
        ("429", RateLimitedError),
    ],
)
async def test_faults_map_to_retryable_errors(stub_server, backend, fault, error):
    stub_server.timeout_sleep_s = 0.8
    stub_server.retry_after_s = 3
    stub_server.enqueue_faults(fault)
    with pytest.raises(error) as info:
        await backend.chat(USER, GenerationParams())
    assert stub_server.openai_base_url in str(info.value)
    if fault == "429":
        assert info.value.retry_after == 3


@pytest.mark.parametrize("fault", ["500", "timeout", "drop", "malformed"])
async def test_transient_faults_are_retried_and_succeed(stub_server, backend, fault):
    stub_server.timeout_sleep_s = 0.8
    stub_server.enqueue_faults(fault)
    attempts = []
    resilient = ResilientBackend(backend, EndpointPool("t", 2), RetryPolicy.no_wait())
    done = await resilient.chat(USER, GenerationParams(), on_attempt=attempts.append)
    assert done.text.startswith("Reply 2 to:")
    assert [a.error_kind for a in attempts] == ["transient", None]
    assert len(stub_server.chat_requests) == 2


async def test_bad_key_is_fatal_not_retried_and_never_quoted(stub_server):
    stub_server.require_api_key = "the-right-key"
    b = OpenAIBackend("stub", base_url=stub_server.openai_base_url, api_key=SECRET)
    attempts = []
    resilient = ResilientBackend(b, EndpointPool("t", 2), RetryPolicy.no_wait())
    try:
        with pytest.raises(FatalBackendError) as info:
            await resilient.chat(USER, GenerationParams(), on_attempt=attempts.append)
    finally:
        await b.aclose()
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "401" in message
    assert SECRET not in message and SECRET not in attempts[0].error
    assert info.value.__context__ is None  # the client's request (with the header) is not kept
    assert len(stub_server.chat_requests) == 1 and attempts[0].error_kind == "fatal"


async def test_unknown_model_is_fatal_with_a_clear_message(stub_server):
    b = OpenAIBackend("gpt-9", base_url=stub_server.openai_base_url)
    resilient = ResilientBackend(b, EndpointPool("t", 2), RetryPolicy.no_wait())
    try:
        with pytest.raises(FatalBackendError, match=r"Model 'gpt-9' was not found at .*404"):
            await resilient.chat(USER, GenerationParams())
    finally:
        await b.aclose()
    assert len(stub_server.chat_requests) == 1


async def test_preflight_ok_unreachable_and_bad_key(stub_server, closed_port):
    good = OpenAIBackend("stub", base_url=stub_server.openai_base_url)
    await good.preflight()
    await good.aclose()

    down = OpenAIBackend("stub", base_url=f"http://127.0.0.1:{closed_port}/v1")
    with pytest.raises(FatalBackendError) as info:
        await down.preflight()
    await down.aclose()
    assert f"127.0.0.1:{closed_port}" in str(info.value) and "OPENAI_BASE_URL" in str(info.value)

    stub_server.require_api_key = "the-right-key"
    wrong = OpenAIBackend("stub", base_url=stub_server.openai_base_url, api_key=SECRET)
    with pytest.raises(FatalBackendError, match="OPENAI_API_KEY") as info:
        await wrong.preflight()
    await wrong.aclose()
    assert SECRET not in str(info.value)


async def test_preflight_catches_a_base_url_without_v1(stub_server):
    b = OpenAIBackend("stub", base_url=stub_server.url)
    with pytest.raises(FatalBackendError, match=r"OPENAI_BASE_URL .*under /v1"):
        await b.preflight()
    await b.aclose()
