"""The sweep tests' LLM: a loopback OpenAI-protocol stub with a little latency."""

from __future__ import annotations

import pytest

from simulator.testing import StubLLMServer


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub"], latency_s=0.1) as server:
        yield server
