"""A lean HTTP/1.1 client for plain-HTTP model servers: request heads built once per endpoint
and path, kept-alive connections, one write per request.

Why: on a sweep against a local server (vLLM, llama.cpp, a stub) the client library's per-call
work cost more CPU than the rest of a conversation's turn: the openai client builds and
deep-copies its request options for every call, httpx parses the URL and headers again, and
httpcore polls every idle socket of its pool on each request and each reply (34 polls per call
at 32 connections) and writes the head and the body as two packets. Here the request head is
built once (headers, path, query), a connection knows it was closed because the event loop says
so (no polling), and a request is one write. Nor does a sweep import the openai package
(0.6 s of CPU per process). Measured with bench/sweep_cli.py.

Only for `http://` endpoints without credentials in the URL and without a proxy for the host:
HTTPS, proxies and URL credentials stay with the openai client (its TLS, proxy and auth
handling); the network is then slower than either client's CPU anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import urllib.request
import zlib
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from simulator.llm.transport import TransportKind, classify

# one record per exchange, as the HTTP libraries write, only when per-call records are asked
# for (SIM_LOG_CALLS=1 sets simulator.calls to DEBUG: logs.py); the log filter masks secrets
http_log = logging.getLogger("simulator.calls.http")
KEEPALIVE_S = 5.0  # as httpx: an idle connection older than this is closed, not reused
MAX_HEAD = 64 * 1024


class LeanTransportError(Exception):
    """The exchange failed at the transport level; `kind` says how (llm/transport.py)."""

    def __init__(self, kind: TransportKind) -> None:
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True)
class HttpReply:
    status: int
    headers: list[tuple[str, str]]  # as sent, names lower-cased
    body: bytes


def lean_target(url: str) -> tuple[str, int, str] | None:
    """(host, port, path) of `url` when the lean client may serve it, else None: not plain
    http, credentials in the URL, or a proxy configured for its host."""
    try:
        parts = urlsplit(url)
        port = parts.port or 80
    except ValueError:
        return None
    if parts.scheme != "http" or not parts.hostname or parts.username or parts.password:
        return None
    proxies = urllib.request.getproxies()
    if ("http" in proxies or "all" in proxies) and not urllib.request.proxy_bypass(parts.netloc):
        return None
    return parts.hostname, port, parts.path.rstrip("/")


class _Connection(asyncio.Protocol):
    """One TCP connection; the loop tells it when data or the end arrives."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.received = 0  # bytes ever received
        self.ended = False  # the peer closed or the connection broke
        self.idle_since = 0.0
        self._waiter: asyncio.Future | None = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self.received += len(data)
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def more(self) -> None:
        """Wait for more bytes; LeanTransportError('reset') when the connection has ended."""
        if self.ended:
            raise LeanTransportError("reset")
        await self.wait()

    async def wait(self) -> None:
        """Wait for more bytes or the end of the connection."""
        if self.ended:
            return
        self._waiter = self.loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def usable(self) -> bool:
        return (
            not self.ended
            and self.transport is not None
            and not self.transport.is_closing()
            and not self.buffer
            and time.monotonic() - self.idle_since < KEEPALIVE_S
        )

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class LeanClient:
    """Requests to one server under `base_path` (each with `query`), over kept-alive
    connections (at most `max_idle` kept idle)."""

    def __init__(
        self,
        host: str,
        port: int,
        base_path: str,
        query: dict[str, str],
        headers: dict[str, str],
        timeout: float,
    ) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.max_idle = 100
        host_header = host if port == 80 else f"{host}:{port}"
        if ":" in host and not host.startswith("["):  # an IPv6 literal
            host_header = f"[{host}]" if port == 80 else f"[{host}]:{port}"
        self._base, self._query = base_path, ("?" + urlencode(query) if query else "")
        lines = [f"Host: {host_header}", *(f"{name}: {value}" for name, value in headers.items())]
        lines += ["Accept-Encoding: gzip, deflate", "Connection: keep-alive"]
        self._fields = "\r\n".join(lines) + "\r\n"
        self._heads: dict[tuple[str, str], bytes] = {}
        self._idle: list[_Connection] = []

    def url(self, path: str) -> str:
        """Where `path` is, for messages (the query left out: it may hold a key)."""
        return f"http://{self.host}:{self.port}{self._base}{path}"

    async def request(
        self, method: str, path: str, body: bytes | None = None, timeout: float | None = None
    ) -> HttpReply:
        """One request and its whole reply; LeanTransportError when the exchange fails."""
        head = self._heads.get((method, path))
        if head is None:
            start = f"{method} {self._base}{path}{self._query} HTTP/1.1\r\n"
            head = self._heads[method, path] = (start + self._fields).encode("latin-1")
        if body is None:
            message = head + b"\r\n"
        else:
            message = head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        wait_s = self.timeout if timeout is None else timeout
        reply = None
        conn = self._reusable()
        if conn is not None:
            seen = conn.received
            try:
                reply = await self._exchange(conn, message, wait_s)
            except LeanTransportError as exc:
                # the server closed a kept-alive connection without answering (it closes idle
                # ones): a GET goes once more, on a fresh connection; a POST may have reached the
                # server (and been billed), so its failure is told to the caller, whose retry
                # policy records the attempt in the ledger before trying again
                if exc.kind != "reset" or conn.received != seen or method != "GET":
                    raise
        if reply is None:
            reply = await self._exchange(await self._connect(wait_s), message, wait_s)
        if http_log.isEnabledFor(logging.DEBUG):
            where = f"http://{self.host}:{self.port}{self._base}{path}{self._query}"
            http_log.debug('HTTP Request: %s %s "HTTP/1.1 %d"', method, where, reply.status)
        return reply

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _reusable(self) -> _Connection | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return None

    async def _connect(self, wait_s: float) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(wait_s):
                _, conn = await loop.create_connection(
                    lambda: _Connection(loop), self.host, self.port
                )
        except TimeoutError:
            raise LeanTransportError("connect_timeout") from None
        except OSError as exc:
            raise LeanTransportError(classify(exc)) from None
        return conn

    async def _exchange(self, conn: _Connection, request: bytes, wait_s: float) -> HttpReply:
        kept = False
        try:
            async with asyncio.timeout(wait_s):
                assert conn.transport is not None
                conn.transport.write(request)
                reply, kept = await _read_reply(conn)
        except TimeoutError:
            raise LeanTransportError("read_timeout") from None
        except OSError as exc:
            raise LeanTransportError(classify(exc) if conn.ended else "reset") from None
        except (ValueError, zlib.error):  # not HTTP, or a body that does not decode
            raise LeanTransportError("other") from None
        finally:
            if kept and len(self._idle) < self.max_idle:
                conn.idle_since = time.monotonic()
                self._idle.append(conn)
            else:
                conn.close()
        return reply


async def _read_reply(conn: _Connection) -> tuple[HttpReply, bool]:
    """The reply on `conn` (1xx skipped) and whether the connection may be reused."""
    while True:
        end = conn.buffer.find(b"\r\n\r\n")
        while end < 0:
            if len(conn.buffer) > MAX_HEAD:
                raise LeanTransportError("other")
            await conn.more()
            end = conn.buffer.find(b"\r\n\r\n")
        head = bytes(conn.buffer[:end]).decode("latin-1").split("\r\n")
        del conn.buffer[: end + 4]
        version, _, rest = head[0].partition(" ")
        if not version.startswith("HTTP/") or not rest[:3].isdigit():
            raise LeanTransportError("other")
        status = int(rest[:3])
        headers = []
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
        if 100 <= status < 200:
            continue
        break
    fields = dict(headers)
    keep = version == "HTTP/1.1" and "close" not in fields.get("connection", "").lower()
    if "chunked" in fields.get("transfer-encoding", "").lower():
        body = await _read_chunked(conn)
    elif "content-length" in fields:
        size = int(fields["content-length"])
        while len(conn.buffer) < size:
            await conn.more()
        body = bytes(conn.buffer[:size])
        del conn.buffer[:size]
    elif status in (204, 304):
        body = b""
    else:  # the body runs to the end of the connection
        while not conn.ended:
            await conn.wait()
        body, keep = bytes(conn.buffer), False
        conn.buffer.clear()
    return HttpReply(status, headers, _decoded(body, fields.get("content-encoding", ""))), keep


async def _read_chunked(conn: _Connection) -> bytes:
    parts: list[bytes] = []
    while True:
        end = conn.buffer.find(b"\r\n")
        while end < 0:
            await conn.more()
            end = conn.buffer.find(b"\r\n")
        size = int(bytes(conn.buffer[:end]).split(b";")[0].strip(), 16)
        del conn.buffer[: end + 2]
        if size == 0:  # trailers, if any, end with an empty line
            while not conn.buffer.startswith(b"\r\n") and conn.buffer.find(b"\r\n\r\n") < 0:
                await conn.more()
            cut = 2 if conn.buffer.startswith(b"\r\n") else conn.buffer.find(b"\r\n\r\n") + 4
            del conn.buffer[:cut]
            return b"".join(parts)
        while len(conn.buffer) < size + 2:
            await conn.more()
        parts.append(bytes(conn.buffer[:size]))
        del conn.buffer[: size + 2]


def _decoded(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        with contextlib.suppress(zlib.error):
            return zlib.decompress(body)
        return zlib.decompress(body, -zlib.MAX_WBITS)
    return body
