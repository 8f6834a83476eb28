"""Model strings to backends, lazily, with clear errors for typos and missing extras."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from simulator.domain import model_strings
from simulator.domain.params import GenerationParams
from simulator.errors import UserError
from simulator.llm import registry
from simulator.llm.base import FatalBackendError
from simulator.llm.mock_backend import MockBackend
from simulator.llm.ollama_backend import OllamaBackend
from simulator.llm.openai_backend import OpenAIBackend


def test_parse_splits_at_the_first_colon():
    assert registry.parse_model_string("ollama:llama3:8b") == ("ollama", "llama3:8b")
    assert registry.parse_model_string(" HF:/models/tiny ") == ("hf", "/models/tiny")
    for bad in ("llama3", "ollama:", ":x", ""):
        with pytest.raises(UserError, match="provider:name"):
            registry.parse_model_string(bad)


def test_unknown_provider_suggests_the_nearest_and_lists_all():
    with pytest.raises(UserError) as info:
        registry.validate_model_string("olama:llama3")
    err = info.value
    assert err.exit_code == 2 and err.field == "model"
    assert "'olama'" in str(err) and "did you mean 'ollama:llama3'" in str(err)
    assert "local, ollama, openai, hf, mock" in str(err)
    with pytest.raises(UserError, match="Known providers") as info:
        registry.validate_model_string("zzzzzz:x")
    assert "did you mean" not in str(info.value)


def test_providers_are_read_only_and_agree_with_the_domain_list():
    with pytest.raises(TypeError):
        registry.PROVIDERS["evil"] = "os:system"  # type: ignore[index]
    assert set(registry.PROVIDERS) == set(model_strings.PROVIDERS)


async def test_create_backend_builds_each_provider_without_contacting_it(stub_server):
    seen = []
    mock = registry.create_backend("mock:alice")
    assert isinstance(mock, MockBackend) and mock.endpoint == "mock:alice"
    ollama = registry.create_backend(
        "ollama:llama3", base_url=stub_server.url, on_pull_progress=lambda *a: seen.append(a)
    )
    openai = registry.create_backend("openai:stub", base_url=stub_server.openai_base_url)
    assert isinstance(ollama, OllamaBackend) and ollama.endpoint == "ollama:" + stub_server.url
    assert isinstance(openai, OpenAIBackend) and openai.model == "stub"
    assert stub_server.requests == []
    stub_server.models = []
    await ollama.chat([{"role": "user", "content": "hi"}], GenerationParams())
    assert seen and seen[-1][0] == "success"  # the callback reached the backend
    await ollama.aclose()
    await openai.aclose()


@pytest.mark.parametrize(("provider", "hint"), [("local", ".[local]"), ("hf", ".[hf]")])
def test_missing_extra_gives_an_install_hint(monkeypatch, provider, hint):
    module = registry.PROVIDERS[provider].partition(":")[0]
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ModuleNotFoundError
    with pytest.raises(FatalBackendError, match=rf"pip install -e '{hint}'".replace("[", r"\[")):
        registry.create_backend(f"{provider}:x")


def test_lazy_import_error_inside_a_factory_also_gives_the_hint(monkeypatch):
    def factory(name, base_url=None, **kw):
        raise ModuleNotFoundError("No module named 'llama_cpp'", name="llama_cpp")

    fake = types.ModuleType("fake")
    fake.create_backend = factory
    monkeypatch.setitem(sys.modules, "simulator.llm.llamacpp_backend", fake)
    with pytest.raises(FatalBackendError, match="'llama_cpp' is not installed"):
        registry.create_backend("local:smollm2")


def test_importing_the_package_and_registry_stays_light():
    code = (
        "import sys, simulator.llm, simulator.llm.registry, simulator.llm.retry;"
        "bad = [m for m in ('openai', 'ollama', 'torch', 'llama_cpp') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
