"""Headless Chromium driven over `--remote-debugging-pipe`: click buttons, read the live DOM and
time the page, with no package beyond the browser (Debian's `chromium`).

The DevTools protocol travels as NUL-terminated JSON on file descriptors 3 (to the browser) and
4 (from it). Every read has a deadline, so a page that hangs fails the test instead of the suite.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium")


def _high(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class BrowserTimeout(AssertionError):
    """The browser did not answer in time (a hung page fails the test with this)."""


class Browser:
    def __init__(self, profile: Path, timeout: float = 60.0):
        to_browser, self._out = os.pipe()
        self._in, from_browser = os.pipe()
        # above 9, so `3<&A 4>&B` cannot overwrite one end with the other (bash: dash reads
        # only one-digit descriptors)
        to_browser, from_browser = (_high(to_browser), _high(from_browser))
        args = [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser}', *args],
            pass_fds=(to_browser, from_browser),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self.timeout = timeout
        self._buffer = b""
        self._next_id = 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        attached = self.call("Target.attachToTarget", targetId=target, flatten=True)
        self.session = attached["sessionId"]

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise BrowserTimeout("Chromium did not answer in time")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserTimeout("Chromium closed the pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(
        self, method: str, session: str | None = None, timeout: float | None = None, **params: Any
    ) -> dict:
        self._next_id += 1
        message: dict = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url: str) -> None:
        self.call("Page.navigate", session=self.session, url=url)

    def js(self, expression: str, timeout: float | None = None) -> Any:
        """The value of `expression` in the page (DevTools evaluation is not bound by the CSP)."""
        result = self.call(
            "Runtime.evaluate",
            session=self.session,
            timeout=timeout,
            expression=expression,
            returnByValue=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float) -> Any:
        """Poll until `expression` is truthy; BrowserTimeout after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(expression, timeout=max(deadline - time.monotonic(), 1.0))
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserTimeout(f"not true within {timeout} s: {expression}")
            time.sleep(0.05)

    def close(self) -> None:
        with contextlib.suppress(BrowserTimeout, RuntimeError, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._in)
        os.close(self._out)


class ConsoleBrowser(Browser):
    """The test browser, keeping the page's errors: uncaught exceptions, console.error and
    log entries at level error (a Content-Security-Policy refusal is one)."""

    def __init__(self, profile: Path):
        self.errors: list[dict] = []
        super().__init__(profile, timeout=30)
        for domain in ("Runtime.enable", "Log.enable"):
            self.call(domain, session=self.session)

    def _message(self, deadline: float) -> dict:
        message = super()._message(deadline)
        method, params = message.get("method"), message.get("params") or {}
        level = {
            "Runtime.exceptionThrown": "error",
            "Runtime.consoleAPICalled": params.get("type"),
            "Log.entryAdded": (params.get("entry") or {}).get("level"),
        }.get(str(method))
        if level == "error":
            self.errors.append(params)
        return message
