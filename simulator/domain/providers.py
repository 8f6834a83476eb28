"""The model providers (the `provider:` of `provider:name`), listed once.

Every place that needs to know a provider (checking a model string, loading its backend, sizing
its pool, passing timeouts, the examples in prompts) reads this table, so adding a provider is
one row. Backends are named by import path, not imported: the domain stays free of backend
libraries (torch, llama.cpp).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Provider:
    name: str
    description: str
    factory: str  # "module:function" that builds its backend
    example: str  # a model string a user could type
    pool_size: int  # concurrent calls per endpoint unless the user sets --pool
    http: bool  # behind an HTTP server: takes SIM_LLM_TIMEOUT per call
    follows_concurrency: bool  # its pool holds N calls when a sweep runs N conversations at a
    # time (a fixed 16 silently capped `--concurrency 32`); in-process ones keep their size: one
    # llama.cpp model answers one call at a time, and the HF batcher's size is a memory budget
    pulls_models: bool = False  # downloads a missing model when first asked (shows progress)
    install_hint: str = "pip install -e ."


_ROWS = (
    Provider(
        "local",
        "in-process llama.cpp (local:smollm2 or local:/path/model.gguf)",
        "simulator.llm.llamacpp_backend:create_backend",
        "local:smollm2",
        pool_size=1,
        http=False,
        follows_concurrency=False,
        install_hint=(
            "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install -e '.[local]' "
            "(compiles llama.cpp, about 8 minutes on 2 cores)"
        ),
    ),
    Provider(
        "ollama",
        "an Ollama server (OLLAMA_HOST)",
        "simulator.llm.ollama_backend:create_backend",
        "ollama:llama3",
        pool_size=4,
        http=True,
        follows_concurrency=True,
        pulls_models=True,
    ),
    Provider(
        "openai",
        "OpenAI or any OpenAI-compatible server (OPENAI_BASE_URL)",
        "simulator.llm.openai_backend:create_backend",
        "openai:gpt-4o-mini",
        pool_size=16,
        http=True,
        follows_concurrency=True,
    ),
    Provider(
        "hf",
        "Hugging Face transformers (hf:PATH_OR_ID)",
        "simulator.llm.hf_backend:create_backend",
        "hf:/path/or/id",
        pool_size=32,
        http=False,
        follows_concurrency=False,
        install_hint="pip install -e '.[hf]'",
    ),
    Provider(
        "mock",
        "deterministic replies for trying the tool and for tests",
        "simulator.llm.mock_backend:create_backend",
        "mock:alice",
        pool_size=64,
        http=False,
        follows_concurrency=True,
    ),
)

PROVIDERS: MappingProxyType[str, Provider] = MappingProxyType({p.name: p for p in _ROWS})
EXAMPLES = ", ".join(p.example for p in _ROWS)


def provider_of(model: str) -> Provider | None:
    """The provider of a model string, None when its prefix is unknown."""
    return PROVIDERS.get(model.partition(":")[0].strip().lower())
