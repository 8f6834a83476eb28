"""The mock provider: deterministic, scriptable, recorded."""

from __future__ import annotations

import time

import pytest

from simulator.domain.params import GenerationParams
from simulator.llm.base import RateLimitedError, TransientBackendError
from simulator.llm.mock_backend import MockBackend

MSGS = [
    {"role": "system", "content": "You are Bob."},
    {"role": "user", "content": "What do  you think\nabout the plan?"},
]


async def test_default_replies_are_deterministic_and_numbered():
    a, b = MockBackend("bob"), MockBackend("bob")
    first = await a.chat(MSGS, GenerationParams())
    assert first.text == "[bob] reply 1 to: What do you think about the plan?"
    # the same prompt, asked again on a backend other conversations used: the same reply
    assert (await a.chat(MSGS, GenerationParams())).text == first.text
    assert (await b.chat(MSGS, GenerationParams())).text == first.text
    later = [
        *MSGS,
        {"role": "assistant", "content": first.text},
        {"role": "user", "content": "And?"},
    ]
    assert (await a.chat(later, GenerationParams())).text == "[bob] reply 2 to: And?"
    assert (first.tokens_in, first.tokens_out) == (10, len(first.text.split()))
    assert first.model_identity == {"provider": "mock", "model": "bob"}
    assert (a.endpoint, a.model) == ("mock:bob", "bob")


async def test_long_messages_are_truncated_in_the_reply():
    done = await MockBackend("x").chat(
        [{"role": "user", "content": "word " * 50}], GenerationParams()
    )
    assert done.text.endswith("...") and len(done.text) < 90


async def test_enqueue_scripts_texts_and_faults_then_falls_back():
    m = MockBackend("al")
    m.enqueue("scripted", TransientBackendError("flaky"), RateLimitedError)
    assert (await m.chat(MSGS, GenerationParams())).text == "scripted"
    with pytest.raises(TransientBackendError, match="flaky"):
        await m.chat(MSGS, GenerationParams())
    with pytest.raises(RateLimitedError):
        await m.chat(MSGS, GenerationParams())
    assert (await m.chat(MSGS, GenerationParams())).text.startswith("[al] reply 1")
    assert len(m.calls) == 4 and m.calls[0].messages == MSGS


async def test_limits_applied_and_the_rest_reported_ignored():
    m = MockBackend("c")
    m.enqueue("one two three four five", "stop HERE please")
    params = GenerationParams(max_tokens=3, temperature=0.5, seed=1)
    done = await m.chat(MSGS, params)
    assert done.text == "one two three" and done.ignored_params == ["temperature", "seed"]
    assert (await m.chat(MSGS, GenerationParams(stop=[" HERE"]))).text == "stop"
    assert m.calls[0].params == params


async def test_latency_is_simulated():
    m = MockBackend("slow", latency_s=0.05)
    t0 = time.monotonic()
    done = await m.chat(MSGS, GenerationParams())
    assert time.monotonic() - t0 >= 0.05 and done.latency_s >= 0.05
