"""Test helpers that ship with the package, so users and benchmarks can run without a model."""

from simulator.testing.llm_stub_server import RecordedRequest, StubLLMServer

__all__ = ["RecordedRequest", "StubLLMServer"]
