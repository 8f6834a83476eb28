"""`repeat_penalty` reaches every backend that can apply it and is reported where it cannot."""

from __future__ import annotations

import pytest

from simulator.domain.params import GenerationParams
from simulator.llm import hf_backend, llamacpp_backend
from simulator.llm.ollama_backend import OllamaBackend
from simulator.llm.openai_backend import OpenAIBackend
from simulator.testing import StubLLMServer

PARAMS = GenerationParams(temperature=0.9, top_k=40, repeat_penalty=1.2)
HELLO = [{"role": "user", "content": "hello"}]


async def test_openai_compatible_servers_receive_it_and_the_service_reports_it_ignored():
    with StubLLMServer(models=["m"]) as stub:
        backend = OpenAIBackend("m", base_url=stub.openai_base_url, api_key="sk-test")
        completion = await backend.chat(HELLO, PARAMS)
        await backend.aclose()
        [request] = stub.chat_requests
    assert request.body["repeat_penalty"] == 1.2 and request.body["top_k"] == 40
    assert completion.ignored_params == []
    official = OpenAIBackend("gpt-4o-mini", api_key="sk-test")
    kwargs, ignored = official.request_kwargs(PARAMS)
    assert "extra_body" not in kwargs and set(ignored) == {"top_k", "repeat_penalty"}
    await official.aclose()


async def test_ollama_receives_it_as_an_option():
    with StubLLMServer(models=["llama3"]) as stub:
        backend = OllamaBackend("llama3", host=stub.url)
        await backend.chat(HELLO, PARAMS)
        await backend.aclose()
        [request] = stub.chat_requests
    assert request.body["options"]["repeat_penalty"] == 1.2


def test_llamacpp_and_hf_apply_it():
    assert llamacpp_backend._sampling_kwargs(PARAMS)["repeat_penalty"] == 1.2
    kwargs, ignored = hf_backend._plan(PARAMS, default_do_sample=False)
    assert kwargs["repetition_penalty"] == 1.2 and "repeat_penalty" not in ignored


@pytest.mark.parametrize("value", [0.0, 3.0, float("nan")])
def test_out_of_range_values_are_refused(value):
    with pytest.raises(ValueError, match="repeat_penalty"):
        GenerationParams(repeat_penalty=value)
