"""Why a request to a model server failed at the transport level, in one sentence.

A researcher acts differently on each: connection refused (start the server), DNS failure (fix
the name), connect timeout (check the address or firewall), read timeout (the server is up but
slow: wait or raise the timeout). Reporting a slow server as unreachable sends them the wrong way.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections.abc import Iterator
from typing import Literal

TransportKind = Literal["refused", "dns", "connect_timeout", "read_timeout", "reset", "other"]

DNS_PHRASES = (
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "getaddrinfo failed",
    "no address associated with hostname",
)


def preflight_timeout_s() -> float:
    """Seconds a preflight check waits for a server's answer (SIM_PREFLIGHT_TIMEOUT, else 10)."""
    try:
        value = float(os.environ.get("SIM_PREFLIGHT_TIMEOUT", "10"))
    except ValueError:
        return 10.0
    return value if 0 < value < 3600 else 10.0


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]


def classify(exc: BaseException) -> TransportKind:
    """The transport failure behind `exc` (an httpx, openai or ollama exception, or OSError)."""
    chain = list(_chain(exc))
    for item in chain:
        if isinstance(item, socket.gaierror):
            return "dns"
        if isinstance(item, ConnectionRefusedError) or (
            isinstance(item, OSError) and item.errno == errno.ECONNREFUSED
        ):
            return "refused"
    # httpx's exceptions, if it is loaded at all (a lean call never loads it)
    httpx = sys.modules.get("httpx")
    for item in chain if httpx is not None else ():
        if isinstance(item, httpx.ConnectTimeout):
            return "connect_timeout"
        if isinstance(item, httpx.ReadTimeout | httpx.WriteTimeout | httpx.PoolTimeout):
            return "read_timeout"
    text = " ".join(str(item).lower() for item in chain)
    if any(phrase in text for phrase in DNS_PHRASES):
        return "dns"
    if "connection refused" in text:
        return "refused"
    timeouts: tuple[type, ...] = (TimeoutError,)
    resets: tuple[type, ...] = (ConnectionResetError,)
    if httpx is not None:
        timeouts += (httpx.TimeoutException,)
        resets += (httpx.RemoteProtocolError, httpx.ReadError)
    for item in chain:
        if isinstance(item, timeouts):
            return "read_timeout"
        if isinstance(item, resets):
            return "reset"
    return "other"


def describe(
    kind: TransportKind,
    where: str,
    variable: str,
    timeout_s: float | None,
    start_hint: str = "start the server",
) -> str:
    """One sentence naming what happened, where (a URL), and what to do about it."""
    waited = f" within {timeout_s:g} s" if timeout_s else ""
    if kind == "refused":
        return (
            f"Nothing is listening at {where} (connection refused); {start_hint} or set "
            f"{variable} to the right address."
        )
    if kind == "dns":
        return (
            f"The host name in {where} could not be resolved (DNS lookup failed); check its "
            f"spelling in {variable}."
        )
    if kind == "connect_timeout":
        return (
            f"Connecting to {where} timed out{waited}; check the address in {variable} and that "
            "no firewall drops the connection."
        )
    if kind == "read_timeout":
        return (
            f"{where} accepted the connection but sent no answer{waited} (read timeout): the "
            "server is up but slow or busy (a model may be loading); try again, or wait longer "
            "with SIM_LLM_TIMEOUT (calls) or SIM_PREFLIGHT_TIMEOUT (the first check)."
        )
    if kind == "reset":
        return f"{where} closed the connection before answering (connection reset)."
    return f"The connection to {where} failed; check {variable} and that the server is running."
