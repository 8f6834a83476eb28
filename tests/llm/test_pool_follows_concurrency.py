"""`sweep run --concurrency N` really sends N calls at once, over loopback, through the real CLI.

Before: the OpenAI pool was a fixed 16 and the Ollama pool a fixed 4, so `--concurrency 32`
silently ran 16 (or 4) calls at a time, and nothing said so; and the HTTP clients' own
connection limits (100 for Ollama's httpx client) could cap a pool the user made bigger. The stub
holds its first replies until the expected number of requests is in flight at once, so the
tests wait on that event instead of timing anything.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from simulator.domain.params import GenerationParams
from simulator.llm.ollama_backend import OllamaBackend
from simulator.llm.retry import PoolRegistry, RetryPolicy
from simulator.testing import StubLLMServer

HOLD_S = 30.0  # how long the stub waits for the expected crowd before answering anyway


def hold_first_wave(stub: StubLLMServer, crowd: int) -> Callable[[dict], str]:
    """A reply_fn: the first requests wait until `crowd` are in flight together, once."""
    released = threading.Event()

    def reply(body: dict) -> str:
        if not released.is_set():
            stub.wait_for_in_flight(crowd, HOLD_S)
            released.set()
        return "A short reply."

    return reply


@pytest.fixture
def sweep_of(run_cli, tmp_path, prison_path):
    """Create a sweep of `n` conversations of 4 messages on `model`; returns (env, sweep id)."""

    def make(model: str, n: int, env: dict[str, str]) -> tuple[dict[str, str], str]:
        env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice", **env}
        imported = run_cli(["experiment", "import", str(prison_path), "--json"], env=env)
        assert imported.code == 0, imported.err
        created = run_cli(
            [
                "sweep",
                "create",
                imported.json()["id"],
                "--messages",
                "4",
                "--agents",
                "Guard=1,Prisoner=1",
                "--llm",
                model,
                "--repetitions",
                str(n),
                "--yes",
                "--json",
            ],
            env=env,
        )
        assert created.code == 0, created.err
        return env, created.json()["sweep_id"]

    return make


def test_openai_pool_follows_concurrency_32(run_cli, sweep_of):
    with StubLLMServer(models=["stub"]) as stub:
        stub.reply_fn = hold_first_wave(stub, 32)
        base = stub.openai_base_url
        env, sweep_id = sweep_of("openai:stub", 32, {"OPENAI_BASE_URL": base})
        result = run_cli(["sweep", "run", sweep_id, "--concurrency", "32"], env=env)
    assert result.code == 0, result.err
    assert stub.max_in_flight == 32  # was 16: the fixed OpenAI pool
    assert "endpoints take up to 32 calls at once" in " ".join(result.err.split())
    pool = f"pool openai:{base}: up to 32 calls at once (follows --concurrency)"
    assert pool in result.err


def test_a_pool_set_by_the_user_caps_the_calls(run_cli, sweep_of):
    with StubLLMServer(models=["stub"]) as stub:
        stub.reply_fn = hold_first_wave(stub, 3)
        base = stub.openai_base_url
        env, sweep_id = sweep_of("openai:stub", 8, {"OPENAI_BASE_URL": base})
        result = run_cli(
            ["sweep", "run", sweep_id, "--concurrency", "8", "--pool", "openai=3"], env=env
        )
    assert result.code == 0, result.err
    assert stub.max_in_flight == 3
    assert "except --pool openai=3" in result.err
    assert f"pool openai:{base}: up to 3 calls at once (set by --pool)" in result.err


def test_ollama_pool_follows_concurrency_and_keeps_its_connections(run_cli, sweep_of):
    """32 at once (was 4), and the 32 connections are reused for the later calls rather than
    opened per call."""
    with StubLLMServer(models=["stub"]) as stub:
        stub.reply_fn = hold_first_wave(stub, 32)
        host = stub.url
        env, sweep_id = sweep_of("ollama:stub", 32, {"OLLAMA_HOST": host})
        stub.reset()  # count only the run's connections
        result = run_cli(["sweep", "run", sweep_id, "--concurrency", "32"], env=env)
    assert result.code == 0, result.err
    assert stub.max_in_flight == 32
    assert len(stub.chat_requests) == 32 * 5  # 4 messages and a summary each
    assert stub.connections_opened <= 32 + 2  # slack: an idle connection may expire (5 s)
    pool = f"pool ollama:{host}: up to 32 calls at once (follows --concurrency)"
    assert pool in result.err


def test_the_http_client_holds_as_many_connections_as_the_pool():
    """101 calls at once to one Ollama server: httpx's own limit of 100 connections used to
    queue the 101st behind the others although the endpoint pool allowed it."""
    crowd = 101
    with StubLLMServer(models=["stub"]) as stub:
        stub.reply_fn = hold_first_wave(stub, crowd)
        registry = PoolRegistry(concurrency=crowd)
        backend = registry.wrap(OllamaBackend("stub", host=stub.url), RetryPolicy.no_wait(1))

        async def many() -> None:
            try:
                user = [{"role": "user", "content": "hi"}]
                params = GenerationParams()
                await asyncio.gather(*(backend.chat(user, params) for _ in range(crowd)))
            finally:
                await backend.aclose()

        asyncio.run(many())
    assert registry.pool_for(backend.endpoint).size == crowd
    assert stub.max_in_flight == crowd
