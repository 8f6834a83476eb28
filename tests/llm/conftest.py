"""Fixtures for backend tests: a loopback stub LLM server and a clean environment."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from simulator.testing import StubLLMServer

_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "OLLAMA_API_KEY")


@pytest.fixture(autouse=True)
def _clean_backend_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's real keys or hosts must never leak into these tests."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stub_server() -> Iterator[StubLLMServer]:
    with StubLLMServer(models=["stub", "llama3"]) as server:
        yield server


@pytest.fixture
def closed_port() -> int:
    """A loopback port with nothing listening (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
