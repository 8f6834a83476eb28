"""Put back what one in-process `llm-sim` call changes for the whole process.

`main()` adds session log handlers to the root logger and loads `.env` into os.environ; a run
installs SIGINT handlers. Tests and fuzzers that call `main()` many times in one process wrap
each call in `ProcessState()` so nothing leaks into the next.
"""

from __future__ import annotations

import logging
import os
import signal
import threading


class ProcessState:
    def __enter__(self) -> ProcessState:
        root = logging.getLogger()
        self.environ = dict(os.environ)
        self.handlers = list(root.handlers)
        self.level = root.level
        self.signals = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc: object) -> None:
        root = logging.getLogger()
        for handler in [h for h in root.handlers if h not in self.handlers]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(self.level)
        os.environ.clear()
        os.environ.update(self.environ)
        if threading.current_thread() is threading.main_thread():
            for sig, handler in self.signals.items():
                if signal.getsignal(sig) is not handler:
                    signal.signal(sig, handler)
