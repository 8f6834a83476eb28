"""An endpoint URL made ready for an HTTP client, and the form of it that may be shown.

Why: a base URL can carry a password (`user:PW@host`) or a key in its query (`?api_key=...`),
spelled out in OPENAI_BASE_URL or referenced as `${VAR}` in an experiment
(domain/endpoint_secrets.py). Backends show, log and record only `shown` (references kept,
spelled-out secrets as ***); the client gets `url` (references filled in from the environment)
without its query, and `query` apart: the openai client appends `/models` to the base URL's
text, so a query left in it came out as `/v1?api_key=.../models`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from simulator.domain.endpoint_secrets import MissingVariable, expand, masked, split_query
from simulator.llm.base import FatalBackendError


@dataclass(frozen=True)
class Endpoint:
    shown: str  # safe to show, log and store
    url: str  # what the client connects to, without the query
    query: dict[str, str] = field(default_factory=dict)  # sent with every request

    @property
    def path(self) -> str:
        """The URL's path (e.g. '/v1'), without the query."""
        return urlsplit(self.url).path

    def shown_at(self, path: str) -> str:
        """`shown` with `path` appended to its path, the query kept after it."""
        parts = urlsplit(self.shown)
        joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
        return urlunsplit((parts.scheme, parts.netloc, joined, parts.query, parts.fragment))


def _without_trailing_slash(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.rstrip("/")
    return urlunsplit(
        (parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, parts.fragment)
    )


def endpoint(url: str, variable: str) -> Endpoint:
    """The endpoint `url` names; FatalBackendError when a `${VAR}` it references is unset
    (`variable` is where the URL came from, for the message)."""
    url = _without_trailing_slash(url.strip())
    shown = masked(url)
    try:
        full = expand(url, os.environ)
    except MissingVariable as exc:
        raise FatalBackendError(
            f"The endpoint {shown} (from {variable}) refers to the environment variable "
            f"{exc.name}, which is not set; export {exc.name} (or put it in .env) before "
            "running, with the secret the endpoint expects."
        ) from None
    base, query = split_query(full)
    return Endpoint(shown, base, query)
