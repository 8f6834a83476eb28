"""The stub can answer only N chat requests at once and queue the rest, like an inference server
with N slots, so benchmarks can make the backend the bottleneck."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import httpx
import pytest

from simulator.testing import StubLLMServer

BODY = {"model": "stub", "messages": [{"role": "user", "content": "hi"}]}


def _post_all(url: str, n: int) -> tuple[ThreadPoolExecutor, list[Future[int]]]:
    """Send `n` chat requests at once, each on its own connection; return the pool and futures."""
    pool = ThreadPoolExecutor(max_workers=n)

    def one() -> int:
        with httpx.Client(timeout=60) as c:
            return c.post(url + "/v1/chat/completions", json=BODY).status_code

    return pool, [pool.submit(one) for _ in range(n)]


def test_max_concurrent_answers_n_at_once_and_queues_the_rest():
    release = threading.Event()
    with StubLLMServer(models=["stub"]) as stub:
        stub.max_concurrent = 2
        stub.reply_fn = lambda body: "ok" if release.wait(60) else "timed out"
        pool, futures = _post_all(stub.url, 5)
        try:
            assert stub.wait_for_in_flight(2, timeout_s=30)
            assert stub.wait_for_queued(3, timeout_s=30)
            assert (stub.in_flight, stub.queued) == (2, 3)
        finally:
            release.set()
            statuses = [f.result(timeout=60) for f in futures]
            pool.shutdown()
        assert statuses == [200] * 5
        assert stub.max_in_flight == 2 and stub.queued == 0
        assert len(stub.chat_requests) == 5


def test_lifting_the_limit_lets_queued_requests_in():
    release = threading.Event()
    with StubLLMServer(models=["stub"]) as stub:
        stub.max_concurrent = 1
        stub.reply_fn = lambda body: "ok" if release.wait(60) else "timed out"
        pool, futures = _post_all(stub.url, 3)
        try:
            assert stub.wait_for_queued(2, timeout_s=30)
            stub.max_concurrent = None
            assert stub.wait_for_in_flight(3, timeout_s=30)
        finally:
            release.set()
            statuses = [f.result(timeout=60) for f in futures]
            pool.shutdown()
        assert statuses == [200] * 3


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        StubLLMServer().max_concurrent = 0


def test_command_line_option_serves_one_at_a_time(closed_port):
    latency = 0.3
    cmd = [sys.executable, "-m", "simulator.testing.llm_stub_server", "--port", str(closed_port)]
    cmd += ["--latency", str(latency), "--max-concurrent", "1"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert "Stub LLM server on" in proc.stdout.readline()
            start = time.monotonic()
            pool, futures = _post_all(f"http://127.0.0.1:{closed_port}", 3)
            statuses = [f.result(timeout=60) for f in futures]
            pool.shutdown()
            # one slot: the three latencies add up (a busy machine only makes this longer)
            assert time.monotonic() - start >= 3 * latency
            assert statuses == [200] * 3
        finally:
            proc.terminate()


def test_command_line_refuses_a_limit_below_one(closed_port):
    cmd = [sys.executable, "-m", "simulator.testing.llm_stub_server", "--port", str(closed_port)]
    done = subprocess.run([*cmd, "--max-concurrent", "0"], capture_output=True, text=True)
    assert done.returncode == 2 and "--max-concurrent must be at least 1" in done.stderr
