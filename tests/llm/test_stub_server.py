"""The stub server speaks both wire protocols and injects the faults it promises."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time

import httpx
import pytest

from simulator.testing import StubLLMServer
from simulator.testing.llm_stub_server import fake_digest

USER = [{"role": "user", "content": "hello   there"}]


@pytest.fixture
def client(stub_server: StubLLMServer):
    with httpx.Client(base_url=stub_server.url, timeout=30) as c:
        yield c


def test_ollama_metadata_endpoints(stub_server, client):
    tags = client.get("/api/tags").json()["models"]
    assert [m["name"] for m in tags] == ["stub:latest", "llama3:latest"]
    assert tags[1]["digest"] == fake_digest("llama3")
    assert client.get("/api/version").json()["version"]
    assert client.post("/api/show", json={"model": "llama3"}).json()["details"]["format"] == "gguf"
    missing = client.post("/api/show", json={"model": "nope"})
    assert missing.status_code == 404 and "not found" in missing.json()["error"]


def test_ollama_chat_streams_ndjson_with_counts(client):
    r = client.post("/api/chat", json={"model": "llama3", "messages": USER})
    assert r.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in r.text.splitlines()]
    assert all(not p["done"] for p in lines[:-1]) and lines[-1]["done"] is True
    text = "".join(p["message"]["content"] for p in lines)
    assert text == "Reply 1 to: hello there"
    assert lines[-1]["prompt_eval_count"] == 2 and lines[-1]["eval_count"] == 5


def test_ollama_chat_non_streaming_applies_options(client):
    body = {
        "model": "llama3",
        "messages": USER,
        "stream": False,
        "options": {"num_predict": 2, "stop": ["zzz"]},
    }
    r = client.post("/api/chat", json=body).json()
    assert r["message"]["content"] == "Reply 1" and r["done_reason"] == "length"


def test_ollama_pull_streams_progress_and_installs(stub_server, client):
    r = client.post("/api/pull", json={"model": "mistral"})
    lines = [json.loads(line) for line in r.text.splitlines()]
    progress = [p for p in lines if "total" in p]
    assert progress and progress[-1]["completed"] == progress[-1]["total"]
    assert lines[-1] == {"status": "success"}
    assert "mistral:latest" in stub_server.models


def test_ollama_pull_of_unknown_name_streams_an_error(stub_server, client):
    stub_server.pullable = {"llama3"}
    lines = [json.loads(x) for x in client.post("/api/pull", json={"model": "x"}).text.splitlines()]
    assert "error" in lines[-1] and "x:latest" not in stub_server.models


def test_ollama_unknown_model_is_404(client):
    r = client.post("/api/chat", json={"model": "nope", "messages": USER, "stream": False})
    assert r.status_code == 404 and r.json() == {"error": "model 'nope' not found"}


def test_openai_models_and_chat_with_usage(client):
    ids = [m["id"] for m in client.get("/v1/models").json()["data"]]
    assert ids == ["stub", "llama3"]
    r = client.post("/v1/chat/completions", json={"model": "stub", "messages": USER}).json()
    assert r["choices"][0]["message"]["content"] == "Reply 1 to: hello there"
    assert r["usage"] == {"prompt_tokens": 2, "completion_tokens": 5, "total_tokens": 7}


def test_openai_unknown_model_and_bad_key_get_openai_error_json(stub_server, client):
    r = client.post("/v1/chat/completions", json={"model": "gpt-9", "messages": USER})
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"
    stub_server.require_api_key = "right"
    bad = client.post(
        "/v1/chat/completions",
        json={"model": "stub", "messages": USER},
        headers={"Authorization": "Bearer wrong"},
    )
    assert bad.status_code == 401 and bad.json()["error"]["code"] == "invalid_api_key"
    ok = client.get("/v1/models", headers={"Authorization": "Bearer right"})
    assert ok.status_code == 200
    assert all("authorization" not in r.headers for r in stub_server.requests)


def test_reply_order_script_then_function_then_default(stub_server, client):
    stub_server.enqueue("first", "second")

    def chat() -> str:
        body = {"model": "stub", "messages": USER, "stream": False}
        return client.post("/api/chat", json=body).json()["message"]["content"]

    assert [chat(), chat()] == ["first", "second"]
    stub_server.reply_fn = lambda body: f"{len(body['messages'])} message(s)"
    assert chat() == "1 message(s)"
    stub_server.reply_fn = None
    assert chat() == "Reply 4 to: hello there"
    assert [r.body["messages"] for r in stub_server.chat_requests] == [USER] * 4


def test_injected_faults_then_recovery(stub_server, client):
    stub_server.retry_after_s = 2
    stub_server.enqueue("kept for the first good answer")
    stub_server.enqueue_faults("429", "500", "malformed", "drop")
    body = {"model": "stub", "messages": USER}
    r = client.post("/v1/chat/completions", json=body)
    assert r.status_code == 429 and r.headers["retry-after"] == "2"
    assert client.post("/v1/chat/completions", json=body).status_code == 500
    malformed = client.post("/v1/chat/completions", json=body)
    assert malformed.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        malformed.json()
    with pytest.raises(httpx.TransportError):
        client.post("/v1/chat/completions", json=body)
    good = client.post("/v1/chat/completions", json=body).json()
    assert good["choices"][0]["message"]["content"] == "kept for the first good answer"


def test_timeout_fault_answers_late(stub_server, client):
    stub_server.timeout_sleep_s = 0.3
    stub_server.enqueue_faults("timeout")
    t0 = time.monotonic()
    r = client.post("/v1/chat/completions", json={"model": "stub", "messages": USER})
    assert r.status_code == 200 and time.monotonic() - t0 >= 0.3


def test_random_faults_are_reproducible_with_a_seed():
    def outcomes(seed: int) -> list[int]:
        with StubLLMServer() as s, httpx.Client(base_url=s.url) as c:
            s.fault_rate, s.fault_seed, s.fault_kinds = 0.5, seed, ("429", "500")
            return [
                c.post("/v1/chat/completions", json={"model": "stub", "messages": USER}).status_code
                for _ in range(12)
            ]

    first = outcomes(7)
    assert first == outcomes(7) and set(first) - {200}
    with pytest.raises(ValueError, match="unknown fault"):
        StubLLMServer().enqueue_faults("explode")


async def test_serves_32_concurrent_slow_requests_in_parallel(stub_server):
    """Each reply waits until all 32 requests of its round are inside the server at once.

    A server that handled requests one by one would never fill the barrier; no clock is read, so
    a busy machine cannot fail this.
    """
    together = threading.Barrier(32, timeout=60)

    def reply(body: dict) -> str:
        together.wait()
        return "ok"

    stub_server.reply_fn = reply
    limits = httpx.Limits(max_connections=32)
    async with httpx.AsyncClient(base_url=stub_server.url, limits=limits, timeout=120) as c:
        body = {"model": "stub", "messages": USER}
        for _ in range(2):  # second round reuses the keep-alive connections
            rs = await asyncio.gather(
                *[c.post("/v1/chat/completions", json=body) for _ in range(32)]
            )
            assert all(r.status_code == 200 for r in rs)
    assert len(stub_server.chat_requests) == 64 and not together.broken


def test_runs_from_the_command_line(closed_port):
    cmd = [
        sys.executable,
        "-m",
        "simulator.testing.llm_stub_server",
        "--port",
        str(closed_port),
        "--latency",
        "0.01",
    ]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert "Stub LLM server on" in proc.stdout.readline()
            r = httpx.get(f"http://127.0.0.1:{closed_port}/api/version", timeout=30)
            assert r.status_code == 200
        finally:
            proc.terminate()
