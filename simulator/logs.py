"""Per-session log folders (INFO and DEBUG) behind a filter that removes secrets.

Why the levels are set on loggers, not only on handlers: a record a handler drops by level was
still built, and one that reaches a handler passes the redaction filter. A sweep makes thousands
of calls, and the HTTP client libraries alone wrote eleven records per call (ten httpcore
DEBUG traces, one httpx INFO line), each formatted and redacted: more CPU than the call. So
libraries stay at WARNING and per-call records (`simulator.calls`, DEBUG) are dropped by their
logger's level before anything is formatted, unless SIM_LOG_CALLS=1 asks for them (then the
libraries' HTTP traces come too). The simulator's other records still reach debug.log.
"""

from __future__ import annotations

import logging
import os
import re
from collections import deque
from datetime import datetime
from pathlib import Path

from simulator.domain.endpoint_secrets import REFERENCE, is_credential_name

CALLS_LOGGER = "simulator.calls"  # one DEBUG record per LLM call attempt
# Client libraries whose DEBUG/INFO records are per request (httpx2/httpcore2: openai 3.x).
HTTP_LIBRARIES = ("httpx", "httpcore", "httpx2", "httpcore2", "openai", "ollama")
QUIET_LIBRARIES = ("urllib3", "pymongo", "asyncio", "filelock")

SECRET_VARIABLES = ("OPENAI_API_KEY", "DB_PASSWORD", "MONGODB_URI", "HF_TOKEN", "ANTHROPIC_API_KEY")
# Every pattern starts with a fixed, rare anchor (a lookbehind on "://", "sk-", "bearer"), so a
# failed attempt costs O(1) and a pass over the text is linear: the old form began with the
# scheme (`[a-z][a-z0-9+.-]*://`), re-scanned every letter run from each of its letters and took
# seconds for a 16k-character argument. The password runs to the last "@" before the host, so a
# password with a raw "@" is hidden whole.
URI_CREDENTIALS = re.compile(r"(?<=[a-z0-9+.\-]://)(?P<user>[^:/@\s]*):(?P<pw>[^/\s]*)@", re.I)
# Placeholders in our own hints ("mongodb://USER:PASSWORD@HOST") and `${VAR}` references to
# the environment (domain/endpoint_secrets.py) are not secrets.
PLACEHOLDER_PASSWORDS = frozenset({"PASSWORD", "<PASSWORD>", "***"})
API_KEY = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|hf_[A-Za-z0-9]{8,})")
BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]+")
# A query parameter in a URL (anchored on "?" or "&"): its value is hidden when its name reads
# like a credential (api_key, token, sig, ...: domain/endpoint_secrets.py).
QUERY_PARAMETER = re.compile(r"(?<=[?&])(?P<name>[A-Za-z0-9_.\-]{1,64})=(?P<value>[^&\s#\"'<>]+)")


def redact(text: str) -> str:
    """Remove passwords in URIs, credential-like query values (?api_key=...), API keys, bearer
    tokens and the values of secret variables."""
    text = URI_CREDENTIALS.sub(_hide_password, text)
    text = QUERY_PARAMETER.sub(_hide_credential_value, text)
    text = API_KEY.sub("***", text)
    text = BEARER.sub(r"\1***", text)
    for name in SECRET_VARIABLES:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            text = text.replace(value, "***")
    return text


def _hide_password(match: re.Match) -> str:
    if match["pw"] in PLACEHOLDER_PASSWORDS or REFERENCE.match(match["pw"]):
        return match[0]
    return f"{match['user']}:***@"


def _hide_credential_value(match: re.Match) -> str:
    value = match["value"]
    if not is_credential_name(match["name"]) or REFERENCE.match(value) or value == "***":
        return match[0]
    return f"{match['name']}=***"


class RedactingFilter(logging.Filter):
    """Redact once per record: info.log and debug.log each carry this filter, and the second
    pass over an already cleaned record would only cost time."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "redacted", False):
            return True
        record.redacted = True
        message = record.getMessage()
        cleaned = redact(message)
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        record.msg, record.args = cleaned, None
        return True


HELD_RECORDS = 10_000  # records kept in memory until the folder is made (the oldest go first)
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class SessionLog(logging.Handler):
    """One CLI session's info.log and debug.log, in `base/<timestamp>_<pid>/`.

    The folder is made only when the session has something worth keeping: a run starts
    (`keep_session_logs()`), or a record of WARNING or above arrives. Until then records are
    held in memory, already redacted, and written first when the folder is made; a session that
    only printed help, a version or a list leaves no folder behind."""

    def __init__(self, base: Path) -> None:
        super().__init__(logging.DEBUG)
        self.base = base
        self.folder: Path | None = None
        self._held: deque[logging.LogRecord] = deque(maxlen=HELD_RECORDS)
        self._files: list[logging.Handler] = []
        self._unwritable = False
        self._redact = RedactingFilter()

    def emit(self, record: logging.LogRecord) -> None:
        self._redact.filter(record)  # now: a held record keeps no secret and no live arguments
        if not self._files and record.levelno >= logging.WARNING:
            self.keep()
        if self._files:
            self._write(record)
        elif not self._unwritable:
            self._held.append(record)

    def keep(self) -> Path | None:
        """Make the folder (once) and write what was held; None if it cannot be written."""
        if self._files or self._unwritable:
            return self.folder
        folder = self.base / f"{datetime.now():%Y-%m-%dT%H-%M-%S}_{os.getpid()}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            self._unwritable = True
            self._held.clear()
            return None
        self.folder = folder
        for name, level in (("info.log", logging.INFO), ("debug.log", logging.DEBUG)):
            handler = logging.FileHandler(folder / name, encoding="utf-8", delay=True)
            handler.setLevel(level)
            handler.setFormatter(logging.Formatter(FORMAT))
            handler.addFilter(RedactingFilter())
            self._files.append(handler)
        while self._held:
            self._write(self._held.popleft())
        return folder

    def _write(self, record: logging.LogRecord) -> None:
        for handler in self._files:
            if record.levelno >= handler.level:
                handler.handle(record)

    def close(self) -> None:
        for handler in self._files:
            handler.close()
        self._held.clear()
        super().close()


_session: SessionLog | None = None


def start_session_logs(base: Path) -> SessionLog:
    """Route this process's records to a session log under `base` (made when first needed)."""
    global _session
    calls = log_calls_requested()
    # Third-party loggers inherit the root's level: WARNING, so their per-request records are
    # never built. Our own namespace keeps DEBUG, except the per-call logger.
    logging.getLogger().setLevel(logging.DEBUG if calls else logging.WARNING)
    logging.getLogger("simulator").setLevel(logging.DEBUG)
    logging.getLogger(CALLS_LOGGER).setLevel(logging.DEBUG if calls else logging.INFO)
    for name in HTTP_LIBRARIES:
        logging.getLogger(name).setLevel(logging.NOTSET)  # follow the root, both ways
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
    _session = SessionLog(base)
    logging.getLogger().addHandler(_session)
    return _session


def keep_session_logs() -> Path | None:
    """A run is starting: its session's records are worth a folder. The folder, or None when
    no session log was started or its folder cannot be written."""
    if _session is None or _session not in logging.getLogger().handlers:
        return None
    return _session.keep()


def log_calls_requested() -> bool:
    """SIM_LOG_CALLS=1: a debug.log record per LLM call and per HTTP exchange (slow on sweeps)."""
    return os.environ.get("SIM_LOG_CALLS", "").strip().lower() in ("1", "true", "yes", "on")
