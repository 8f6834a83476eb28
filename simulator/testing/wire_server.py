"""nx-27017 (the MongoDB wire protocol over SQLite) on a free loopback port: for the tests' TCP
store and the store benchmarks, so both talk to pymongo as a real server would be talked to."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def wire_server(
    folder: Path, start_timeout_s: float = 30.0, port: int | None = None
) -> Iterator[str]:
    """Start nx-27017 with its data in `folder`; yield its mongodb:// URI; stop it after.

    `port`: a given one (a server restarted where its clients look for it), else a free one.
    RuntimeError when it does not accept connections within `start_timeout_s`.
    """
    port = port or free_port()
    command = [sys.executable, "-m", "nx_27017.nx_27017", "--host", "127.0.0.1", "-p", str(port)]
    command += ["--data-dir", str(folder / "data"), "--log-file", str(folder / "nx.log")]
    command += ["--pid-file", str(folder / "nx.pid")]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("nx-27017 did not start") from None
                time.sleep(0.1)
        yield f"mongodb://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
