"""A pseudo-terminal session of the real `python main.py`, and the keys the tests send."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pexpect

REPO = Path(__file__).resolve().parents[2]
PRISON = REPO / "prompts" / "experiments" / "prison.yaml"

DOWN = "\x1b[B"
ENTER = "\r"
CTRL_C = "\x03"
BACKSPACE = "\x7f"
CLEAR_LINE = "\x15"  # Ctrl-U: empties a prompt's pre-filled default before typing a new value
FINISH = "\x1b\r"  # Esc then Enter ends a multi-line answer


class Pty:
    """One interactive session; `transcript` keeps everything the program printed."""

    def __init__(self, env: dict[str, str], cwd: Path):
        self.transcript = io.StringIO()
        self.child = pexpect.spawn(
            sys.executable,
            [str(REPO / "main.py")],
            env=env,
            cwd=str(cwd),
            # the window as the program sees it (conftest sets LINES and COLUMNS to match)
            dimensions=(int(env.get("LINES", "50")), int(env.get("COLUMNS", "220"))),
            encoding="utf-8",
            timeout=120,  # bounds a hang only: expect returns as soon as the text shows
        )
        self.child.logfile_read = self.transcript

    def expect(self, pattern: str, regex: bool = False) -> str:
        """Wait for exact text (or a regex); return the match."""
        if regex:
            self.child.expect(pattern)
            return self.child.match.group(0)
        self.child.expect_exact(pattern)
        return pattern

    def answer(self, prompt: str, keys: str) -> None:
        self.expect(prompt)
        self.child.send(keys)

    def menu(self, prompt: str, label: str) -> None:
        """Pick a menu entry the one way every list works: type part of its label (the list
        filters, labels starting with it first), then Enter."""
        self.answer(prompt, label + ENTER)

    def finish(self) -> str:
        """Wait for the program to end; it must exit 0 and never show a traceback."""
        self.child.expect(pexpect.EOF)
        self.child.close()
        output = self.transcript.getvalue()
        assert "Traceback" not in output, output
        assert self.child.exitstatus == 0, output
        return output
