"""The OpenAI backend's lean call (`client.post` of the body, reply read as JSON): the server
receives what `chat.completions.create` would send, and odd replies are called malformed."""

from __future__ import annotations

import json

import openai
import pytest

from simulator.domain.params import GenerationParams
from simulator.llm.base import TransientBackendError
from simulator.llm.openai_backend import OpenAIBackend, parse_chat_completion

USER = [{"role": "system", "content": "You are a guard."}, {"role": "user", "content": "Hi"}]
PARAMS = [
    GenerationParams(),
    GenerationParams(temperature=0.0, top_p=1.0, seed=0, max_tokens=1),
    GenerationParams(temperature=1.3, top_k=40, repeat_penalty=1.2, stop=["\nGuard:"]),
]


@pytest.mark.parametrize("params", PARAMS)
async def test_the_server_receives_what_the_client_would_send(stub_server, params):
    backend = OpenAIBackend("stub", base_url=stub_server.openai_base_url, timeout=5)
    client = openai.AsyncOpenAI(base_url=stub_server.openai_base_url, api_key="sk-x", max_retries=0)
    try:
        await backend.chat(USER, params)
        kw, _ = backend.request_kwargs(params)
        await client.chat.completions.create(model="stub", messages=USER, **kw)
    finally:
        await backend.aclose()
        await client.close()
    lean, reference = (r.body for r in stub_server.chat_requests[-2:])
    assert lean == reference


async def test_the_client_request_transform_is_not_on_the_path(stub_server, monkeypatch):
    async def refuse(*_a, **_kw):
        raise AssertionError("chat.completions.create was called")

    monkeypatch.setattr(openai.resources.chat.AsyncCompletions, "create", refuse)
    backend = OpenAIBackend("stub", base_url=stub_server.openai_base_url, timeout=5)
    try:
        stub_server.enqueue("Line up.")
        assert (await backend.chat(USER, GenerationParams())).text == "Line up."
    finally:
        await backend.aclose()


def reply(**over) -> bytes:
    body = {
        "id": "c1",
        "model": "m",
        "system_fingerprint": "fp",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    body.update(over)
    return json.dumps(body).encode()


def test_a_complete_reply_is_read():
    got = parse_chat_completion(reply())
    assert (got.text, got.tokens_in, got.tokens_out, got.model, got.system_fingerprint) == (
        "Hello",
        3,
        1,
        "m",
        "fp",
    )


def test_null_content_and_missing_usage_read_as_empty_and_unknown():
    got = parse_chat_completion(
        reply(choices=[{"message": {"role": "assistant", "content": None}}], usage=None)
    )
    assert (got.text, got.tokens_in, got.tokens_out) == ("", None, None)


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[]",
        reply(choices=[]),
        reply(choices=[{"message": {"content": 42}}]),
        reply(usage={"prompt_tokens": "3", "completion_tokens": 1}),
        reply(usage={"prompt_tokens": True, "completion_tokens": 1}),
    ],
    ids=["not-json", "a-list", "no-choices", "content-not-text", "tokens-text", "tokens-bool"],
)
def test_odd_replies_are_rejected(raw):
    with pytest.raises((ValueError, TypeError, KeyError, IndexError)):
        parse_chat_completion(raw)


async def test_an_odd_reply_over_http_is_a_transient_malformed_error(stub_server):
    backend = OpenAIBackend("stub", base_url=stub_server.openai_base_url, timeout=5)
    stub_server.enqueue_faults("malformed")
    try:
        with pytest.raises(TransientBackendError, match="malformed chat completion"):
            await backend.chat(USER, GenerationParams())
    finally:
        await backend.aclose()
