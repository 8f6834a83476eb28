"""One table of providers: every place that needs to know one reads it (issue 11's seam)."""

from __future__ import annotations

import importlib.util

import pytest

from simulator.domain import model_strings
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.providers import EXAMPLES, PROVIDERS, provider_of
from simulator.llm import registry, retry
from simulator.llm.access import LLMAccess


def test_every_list_of_providers_is_the_table():
    names = set(PROVIDERS)
    assert names == {"local", "ollama", "openai", "hf", "mock"}
    assert set(model_strings.PROVIDERS) == names
    assert set(registry.PROVIDERS) == names
    assert set(retry.DEFAULT_POOL_SIZES) == names
    assert {"ollama", "openai", "mock"} == retry.FOLLOWS_CONCURRENCY
    for example in EXAMPLES.split(", "):
        assert model_strings.check_model_string(example) == example


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_each_backend_module_exists_without_importing_it(name):
    module = PROVIDERS[name].factory.partition(":")[0]
    assert importlib.util.find_spec(module) is not None


@pytest.mark.parametrize(
    ("model", "timeout", "pull_progress"),
    [
        ("openai:gpt-4o-mini", True, False),
        ("ollama:llama3", True, True),
        ("mock:a", False, False),
        ("hf:/models/tiny", False, False),
    ],
)
def test_backends_get_the_options_their_provider_takes(model, timeout, pull_progress):
    """SIM_LLM_TIMEOUT reaches only HTTP providers; pull progress only Ollama."""
    built: list[dict] = []

    def factory(model_string: str, **kwargs):
        built.append(kwargs)
        return registry.create_backend("mock:x")

    access = LLMAccess(factory=factory, timeout_s=7.0, on_pull_progress=lambda *a: None)
    access.get(LLMChoice(model=model))
    assert ("timeout" in built[0]) == timeout
    assert ("on_pull_progress" in built[0]) == pull_progress
    assert provider_of(model) is PROVIDERS[model.partition(":")[0]]


def test_an_unknown_prefix_has_no_provider():
    assert provider_of("nope:x") is None
