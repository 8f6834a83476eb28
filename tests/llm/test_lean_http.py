"""The lean HTTP client the OpenAI backend uses for plain-HTTP servers: it keeps connections,
reads every framing a server may choose, reconnects when a server dropped an idle connection,
leaves HTTPS, proxies and URL credentials to the openai client, and a sweep's process never
imports the openai package."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from simulator.domain.params import GenerationParams
from simulator.llm.base import FatalBackendError
from simulator.llm.lean_http import LeanClient, LeanTransportError, lean_target
from simulator.llm.openai_backend import OpenAIBackend

ROOT = Path(__file__).resolve().parents[2]
USER = [{"role": "user", "content": "hi"}]
REPLY = json.dumps({"choices": [{"message": {"content": "Line up."}}], "model": "m"}).encode()
GZ = gzip.compress(REPLY)


@asynccontextmanager
async def raw_server(answer: Callable[[int], bytes], close_after: bool = False) -> AsyncIterator:
    """A loopback server answering the n-th request with `answer(n)`'s bytes as they are (no
    bytes: it closes the connection unanswered); `close_after`: it closes each connection after
    its answer. Yields (port, connections)."""
    connections: list[int] = []
    served = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                size = 0
                for line in head.decode("latin-1").split("\r\n"):
                    if line.lower().startswith("content-length:"):
                        size = int(line.split(":", 1)[1])
                await reader.readexactly(size)
                served[0] += 1
                reply = answer(served[0])
                if not reply:  # read the request, then drop the connection without a word
                    break
                writer.write(reply)
                await writer.drain()
                if close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], connections
    finally:
        server.close()
        await server.wait_closed()


def ok(body: bytes, *fields: str) -> bytes:
    head = "HTTP/1.1 200 OK\r\n" + "".join(f"{f}\r\n" for f in fields)
    return head.encode() + b"\r\n" + body


def chunked(body: bytes) -> bytes:
    middle = len(body) // 2
    parts = [body[:middle], body[middle:]]
    data = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\nX-Trailer: 1\r\n\r\n"
    return ok(data, "Transfer-Encoding: chunked")


ANSWERS = {
    "content-length": lambda n: ok(REPLY, f"Content-Length: {len(REPLY)}"),
    "chunked": lambda n: chunked(REPLY),
    "gzip": lambda n: ok(GZ, "Content-Encoding: gzip", f"Content-Length: {len(GZ)}"),
    "100-continue first": lambda n: (
        b"HTTP/1.1 100 Continue\r\n\r\n" + ok(REPLY, f"Content-Length: {len(REPLY)}")
    ),
}


@pytest.mark.parametrize("framing", list(ANSWERS))
async def test_every_framing_is_read_and_the_connection_kept(framing):
    async with raw_server(ANSWERS[framing]) as (port, connections):
        backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=5)
        try:
            texts = [(await backend.chat(USER, GenerationParams())).text for _ in range(3)]
        finally:
            await backend.aclose()
    assert texts == ["Line up."] * 3
    assert len(connections) == 1  # one connection for the three calls


async def test_a_reply_to_the_end_of_the_connection_and_a_server_that_closes():
    async with raw_server(lambda n: ok(REPLY, "Connection: close"), close_after=True) as (
        port,
        connections,
    ):
        client = LeanClient("127.0.0.1", port, "/v1", {}, {}, timeout=5)
        try:
            replies = [await client.request("POST", "/chat/completions", b"{}") for _ in range(2)]
        finally:
            await client.aclose()
    assert [r.body for r in replies] == [REPLY, REPLY]
    assert len(connections) == 2  # a closed connection is never reused


async def test_an_idle_connection_the_server_dropped_is_replaced_without_an_error():
    async with raw_server(lambda n: ok(REPLY, f"Content-Length: {len(REPLY)}"), True) as (
        port,
        connections,
    ):
        # the server closes after each answer but says nothing: the client learns it when
        # the connection ends, and the next request goes out on a new one
        client = LeanClient("127.0.0.1", port, "/v1", {"api-version": "1"}, {}, timeout=5)
        try:
            first = await client.request("POST", "/chat/completions", b"{}")
            await asyncio.sleep(0.05)
            second = await client.request("POST", "/chat/completions", b"{}")
        finally:
            await client.aclose()
    assert first.body == second.body == REPLY
    assert len(connections) == 2


async def test_a_page_that_is_not_json_fails_the_preflight_with_the_fix():
    page = b"<html>a web interface</html>"
    async with raw_server(lambda n: ok(page, f"Content-Length: {len(page)}")) as (port, _):
        backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}", timeout=5)
        try:
            with pytest.raises(FatalBackendError, match="does not answer like an OpenAI"):
                await backend.preflight()
        finally:
            await backend.aclose()


def test_https_proxies_and_url_credentials_stay_with_the_openai_client(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert lean_target("http://127.0.0.1:8000/v1") == ("127.0.0.1", 8000, "/v1")
    assert lean_target("https://api.openai.com/v1") is None
    assert lean_target("http://bob:pw@127.0.0.1:8000/v1") is None
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert lean_target("http://10.0.0.5:8000/v1") is None
    monkeypatch.setenv("NO_PROXY", "10.0.0.5")
    assert lean_target("http://10.0.0.5:8000/v1") == ("10.0.0.5", 8000, "/v1")


def test_a_call_to_a_plain_http_server_never_imports_the_openai_package(stub_server):
    program = (
        "import asyncio, sys\n"
        "from simulator.domain.params import GenerationParams\n"
        "from simulator.llm.openai_backend import OpenAIBackend\n"
        "async def go():\n"
        "    b = OpenAIBackend('stub', base_url=sys.argv[1])\n"
        "    await b.preflight()\n"
        "    reply = await b.chat([{'role': 'user', 'content': 'hi'}], GenerationParams())\n"
        "    await b.aclose()\n"
        "    return reply.text\n"
        "print(bool(asyncio.run(go())), 'openai' in sys.modules, 'httpx2' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", program, stub_server.openai_base_url],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "False"]


@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_a_request_dropped_unanswered_on_a_kept_connection(method):
    """The server reads the second request on a kept-alive connection and drops it unanswered:
    a POST may have reached the model (and been billed), so it is not sent again behind the
    caller's back (its retry policy records the attempt); a GET goes once more, fresh."""
    answers = {2: b""}

    def answer(n: int) -> bytes:
        return answers.get(n, ok(REPLY, f"Content-Length: {len(REPLY)}"))

    async with raw_server(answer) as (port, connections):
        client = LeanClient("127.0.0.1", port, "/v1", {}, {}, timeout=5)
        try:
            first = await client.request(method, "/models", b"{}" if method == "POST" else None)
            if method == "POST":
                with pytest.raises(LeanTransportError):
                    await client.request(method, "/models", b"{}")
            else:
                assert (await client.request(method, "/models")).body == REPLY
        finally:
            await client.aclose()
    assert first.body == REPLY
    assert len(connections) == (1 if method == "POST" else 2)
