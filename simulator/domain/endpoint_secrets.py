"""Secrets in an endpoint URL (an LLM's `base_url`, an embedder's `openai:MODEL@URL`).

Why this exists: an experiment is stored, shown to every user of the database (`experiment
show --json`), exported and copied into every run it makes, so a password or key written in its
URL would be read by all of them. A password-protected endpoint stays reachable: the secret is
written as a reference to an environment variable, `http://user:${LLM_PASSWORD}@host/v1` or
`https://gateway/v1?api_key=${GATEWAY_KEY}`. The reference is what is stored, shown and
exported; the backend fills in the variable's value only when it connects (`expand`). A URL
that spells a secret out is refused with a paragraph saying how to write it (`refusal`).

Pure: the environment comes in as a mapping.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

# A query parameter whose name reads like a credential (after lower-casing, '-' as '_'):
# key, api_key, apikey, token, access_token, password, secret, sig, X-Amz-Signature, ...
CREDENTIAL_NAME = re.compile(
    r"(?:^|_)(?:key|apikey|token|secret|password|passwd|pwd|pass|sig|signature|auth|"
    r"authorization|credential|credentials|session|jwt|bearer)s?$"
    r"|apikey|api_key|secret|password",
)
REFERENCE = re.compile(r"^\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}$")
MASK = "***"
EXAMPLE_PASSWORD = "http://user:${LLM_ENDPOINT_PASSWORD}@host:8000/v1"
EXAMPLE_QUERY = "https://host/v1?api_key=${LLM_ENDPOINT_KEY}"


def is_credential_name(name: str) -> bool:
    """Whether a query parameter's name reads like a credential (key, token, sig, ...)."""
    return bool(CREDENTIAL_NAME.search(name.strip().lower().replace("-", "_")))


def _parts(url: str):
    """urlsplit, or None for text no URL parser reads (then nothing is found or replaced)."""
    try:
        return urlsplit(url)
    except ValueError:
        return None


def _userinfo(netloc: str) -> tuple[str | None, str | None, str]:
    """(user, password, host[:port]) of a netloc; the password runs to the last '@'."""
    if "@" not in netloc:
        return None, None, netloc
    creds, host = netloc.rsplit("@", 1)
    user, sep, password = creds.partition(":")
    return user, (password if sep else None), host


def _query_pairs(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query, keep_blank_values=True)


def literal_secrets(url: str) -> list[str]:
    """Where `url` spells out a secret: 'the password' and/or "query parameter 'api_key'"
    (a `${NAME}` reference, or an empty value, is not a secret)."""
    parts = _parts(url)
    if parts is None:
        return []
    found = []
    _, password, _ = _userinfo(parts.netloc)
    if password and not REFERENCE.match(password):
        found.append("the password (user:PASSWORD@host)")
    for name, value in _query_pairs(parts.query):
        if value and is_credential_name(name) and not REFERENCE.match(value):
            found.append(f"the query parameter '{name}'")
    return found


def references(url: str) -> list[str]:
    """The environment variables `url` names with `${NAME}`, in order, once each."""
    return list(dict.fromkeys(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", url)))


def refusal(url: str, field: str = "base_url") -> str | None:
    """The paragraph refusing a URL that spells out a secret, None when it spells out none."""
    found = literal_secrets(url)
    if not found:
        return None
    return (
        f"{field} {masked(url)!r} spells out {' and '.join(found)}, and an experiment is "
        "stored, shown to every user of the database and exported; put the secret in an "
        "environment variable (or .env) and write a reference to it in its place, e.g. "
        f"{EXAMPLE_PASSWORD} or {EXAMPLE_QUERY}: the reference is stored, and the value is read "
        "from the environment when the run connects (a key the server expects in the "
        "Authorization header belongs in OPENAI_API_KEY)"
    )


def masked(url: str) -> str:
    """`url` safe to show or store: a spelled-out password and credential-like query values
    become ***; `${NAME}` references stay (they are not secrets)."""
    parts = _parts(url)
    if parts is None:
        return url
    user, password, host = _userinfo(parts.netloc)
    netloc = parts.netloc
    if password and not REFERENCE.match(password):
        netloc = f"{user}:{MASK}@{host}"
    query = parts.query
    if query:
        query = "&".join(
            f"{name}={_masked_value(name, value)}" if "=" in piece else piece
            for piece in query.split("&")
            for name, _, value in [piece.partition("=")]
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _masked_value(name: str, value: str) -> str:
    if value and is_credential_name(name) and not REFERENCE.match(value):
        return MASK
    return value


class MissingVariable(KeyError):
    """A `${NAME}` reference whose variable the environment does not set."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def expand(url: str, environ: Mapping[str, str]) -> str:
    """`url` with each `${NAME}` replaced by the variable's value, percent-encoded for where it
    stands; MissingVariable naming the first one unset."""

    def value(match: re.Match) -> str:
        name = match[1]
        found = environ.get(name)
        if found is None or found == "":
            raise MissingVariable(name)
        return quote(found, safe="")

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", value, url)


def split_query(url: str) -> tuple[str, dict[str, str]]:
    """(the URL without its query, the query's parameters): a client appends paths such as
    `/models` to the first and sends the second with every request, so `?api_key=...` stays a
    query instead of ending up in front of the path."""
    parts = _parts(url)
    if parts is None or not parts.query:
        return url, {}
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", parts.fragment))
    return base, dict(_query_pairs(parts.query))


def check_http_url(value: str, field: str = "base_url") -> str:
    """An http(s) URL with a host (and a valid port if one is given), or ValueError saying so
    (the URL shown masked)."""
    value = value.strip()
    example = "e.g. http://localhost:8000/v1"
    if any(ord(ch) <= 32 or ord(ch) == 127 for ch in value):
        raise ValueError(f"{field} must not contain spaces or control characters ({example})")
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port > 0
    except ValueError as exc:
        raise ValueError(
            f"{field} {masked(value)!r} is not a valid URL ({exc}; {example})"
        ) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{field} {masked(value)!r} must be an http:// or https:// URL with a host ({example})"
        )
    if not port_ok:
        raise ValueError(f"{field} {masked(value)!r} has port 0 ({example})")
    return value
