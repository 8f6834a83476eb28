"""What a person would see: a terminal emulator (pyte) fed with everything a pty session prints."""

from __future__ import annotations

import contextlib
import time

import pexpect
from pty_session import Pty

try:
    import pyte
except ImportError as exc:  # an environment installed before pyte joined the test extra
    raise ImportError("pyte is missing: pip install -e '.[test]' installs it") from exc

SETTLE_LIMIT = 60  # seconds: bounds a hang only; `until` returns as soon as the screen matches


class Screen:
    """The session's screen, rows by columns, as the terminal shows it now."""

    def __init__(self, session: Pty):
        rows, columns = session.child.getwinsize()
        self.session = session
        self._screen = pyte.Screen(columns, rows)
        self._stream = pyte.Stream(self._screen)
        transcript = session.child.logfile_read
        session.child.logfile_read = _Tee(transcript, self)

    def write(self, data: str) -> None:
        self._stream.feed(data)

    def flush(self) -> None:
        pass

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self._screen.display]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def joined(self) -> str:
        """The screen's text as one line, so a wrapped sentence reads whole: a row filled to
        the last column runs on into the next (cut mid-word), others end a word; runs of
        spaces count as one."""
        width = self._screen.columns
        parts = []
        for line in self.lines:
            parts.append(line if len(line) == width else line + "\n")
        return " ".join("".join(parts).split())

    def until(self, shown: str) -> None:
        """Read the program's output until the screen shows `shown` (wrapped or not)."""
        deadline = time.monotonic() + SETTLE_LIMIT
        while " ".join(shown.split()) not in self.joined():
            if time.monotonic() > deadline:
                raise AssertionError(f"{shown!r} never showed; the screen:\n{self.text}")
            with contextlib.suppress(pexpect.TIMEOUT):
                self.session.child.read_nonblocking(4096, timeout=0.2)


class _Tee:
    def __init__(self, *sinks):
        self.sinks = sinks

    def write(self, data: str) -> None:
        for sink in self.sinks:
            sink.write(data)

    def flush(self) -> None:
        for sink in self.sinks:
            sink.flush()
