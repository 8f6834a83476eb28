"""A slow server is not an unreachable one: refused, DNS, read timeout and bad status are told
apart, through the real clients over loopback."""

from __future__ import annotations

import socket
import threading

import pytest

from simulator.domain.params import GenerationParams
from simulator.llm.base import FatalBackendError, TransientBackendError
from simulator.llm.ollama_backend import OllamaBackend
from simulator.llm.openai_backend import OpenAIBackend
from simulator.testing import StubLLMServer

HELLO = [{"role": "user", "content": "hello"}]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def silent_server():
    """Accepts connections and never answers: the shape of a server busy loading a model."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    sock.close()


def _openai(url: str, timeout: float = 30.0) -> OpenAIBackend:
    return OpenAIBackend("m", base_url=url + "/v1", api_key="sk-test", timeout=timeout)


async def test_openai_refused_is_not_a_timeout():
    backend = _openai(f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(FatalBackendError, match=r"connection refused\); start the server"):
        await backend.preflight()
    with pytest.raises(TransientBackendError, match="connection refused"):
        await backend.chat(HELLO, GenerationParams())
    await backend.aclose()


async def test_openai_slow_server_is_reported_as_slow_not_unreachable(silent_server, monkeypatch):
    monkeypatch.setenv("SIM_PREFLIGHT_TIMEOUT", "0.5")
    backend = _openai(silent_server, timeout=0.5)
    with pytest.raises(FatalBackendError) as caught:
        await backend.preflight()
    text = str(caught.value)
    assert "read timeout" in text and "up but slow" in text and "SIM_PREFLIGHT_TIMEOUT" in text
    assert "refused" not in text and "Cannot reach" not in text
    with pytest.raises(TransientBackendError, match=r"sent no answer within 0.5 s \(read timeout"):
        await backend.chat(HELLO, GenerationParams())
    await backend.aclose()


async def test_openai_dns_failure_names_dns():
    backend = _openai("http://no-such-host.invalid")
    with pytest.raises(FatalBackendError, match=r"could not be resolved \(DNS lookup failed\)"):
        await backend.preflight()
    await backend.aclose()


async def test_openai_bad_status_names_the_status():
    with StubLLMServer(models=["m"]) as stub:
        stub.enqueue_faults("500")
        backend = _openai(stub.url)
        with pytest.raises(TransientBackendError, match="HTTP 500"):
            await backend.chat(HELLO, GenerationParams())
        await backend.aclose()


async def test_ollama_tells_refused_slow_and_dns_apart(silent_server, monkeypatch):
    monkeypatch.setenv("SIM_PREFLIGHT_TIMEOUT", "0.5")
    refused = OllamaBackend("llama3", host=f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(
        FatalBackendError, match=r"connection refused\); start Ollama with `ollama serve`"
    ):
        await refused.preflight()
    slow = OllamaBackend("llama3", host=silent_server, timeout=0.5)
    with pytest.raises(FatalBackendError, match="read timeout"):
        await slow.preflight()
    dns = OllamaBackend("llama3", host="http://no-such-host.invalid:11434")
    with pytest.raises(FatalBackendError, match="DNS lookup failed"):
        await dns.preflight()
    for backend in (refused, slow, dns):
        await backend.aclose()
