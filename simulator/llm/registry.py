"""Model strings (`provider:name`) to backends, importing each backend module only when used.

Why lazy: `local` needs llama-cpp-python and `hf` needs torch; a user of Ollama should install
neither, and importing them costs seconds. A missing extra becomes one clear error with the pip
command that fixes it.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from simulator.domain.providers import EXAMPLES
from simulator.domain.providers import PROVIDERS as PROVIDER_TABLE
from simulator.errors import UserError
from simulator.llm.base import Backend, FatalBackendError

PROVIDERS: MappingProxyType[str, str] = MappingProxyType(
    {name: p.factory for name, p in PROVIDER_TABLE.items()}
)
INSTALL_HINTS: MappingProxyType[str, str] = MappingProxyType(
    {name: p.install_hint for name, p in PROVIDER_TABLE.items()}
)


def parse_model_string(s: str) -> tuple[str, str]:
    """Split `provider:name` at the first colon (`ollama:llama3:8b` keeps its tag)."""
    text = (s or "").strip()
    provider, sep, name = text.partition(":")
    if not sep or not provider.strip() or not name.strip():
        raise UserError(
            f"'{s}' is not a model string of the form provider:name",
            field="model",
            fix=f"write it like one of: {EXAMPLES}.",
        )
    return provider.strip().lower(), name.strip()


def validate_model_string(s: str) -> tuple[str, str]:
    """Parse and check the provider is known; the error names the nearest known one."""
    provider, name = parse_model_string(s)
    if provider not in PROVIDERS:
        known = ", ".join(PROVIDERS)
        near = difflib.get_close_matches(provider, list(PROVIDERS), n=1, cutoff=0.5)
        hint = f"did you mean '{near[0]}:{name}'? " if near else ""
        raise UserError(
            f"unknown model provider '{provider}' in '{s}'",
            field="model",
            fix=f"{hint}Known providers: {known}.",
        )
    return provider, name


def load_factory(provider: str) -> Callable[..., Backend]:
    """Import the provider's module on demand; a missing dependency becomes a FatalBackendError."""
    module_name, _, attr = PROVIDERS[provider].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _missing(provider, exc) from None
    return getattr(module, attr)


def create_backend(
    model: str,
    *,
    base_url: str | None = None,
    on_pull_progress: Callable[[str, int | None, int | None], Any] | None = None,
    **kw: Any,
) -> Backend:
    """Build the backend for `model` (e.g. "ollama:llama3"). Nothing is contacted here."""
    provider, name = validate_model_string(model)
    factory = load_factory(provider)
    if on_pull_progress is not None:
        kw["on_pull_progress"] = on_pull_progress
    try:
        return factory(name, base_url=base_url, **kw)
    except ImportError as exc:  # factories may import their heavy dependency lazily
        raise _missing(provider, exc) from None


def _missing(provider: str, exc: ImportError) -> FatalBackendError:
    hint = INSTALL_HINTS.get(provider, "pip install -e .")
    what = exc.name or str(exc)
    return FatalBackendError(
        f"The '{provider}' backend cannot be loaded because '{what}' is not installed; "
        f"install it with: {hint}"
    )
