"""Test helpers that ship with the package, so users and benchmarks can run without a model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simulator.testing.llm_stub_server import RecordedRequest, StubLLMServer

__all__ = ["RecordedRequest", "StubLLMServer"]


def __getattr__(name: str) -> Any:
    # Lazy, so `python -m simulator.testing.llm_stub_server` does not import the module twice.
    if name in __all__:
        from simulator.testing import llm_stub_server

        return getattr(llm_stub_server, name)
    raise AttributeError(name)
