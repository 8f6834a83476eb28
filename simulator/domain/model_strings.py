"""Model strings such as `ollama:llama3`: checked without importing any backend library."""

from __future__ import annotations

import difflib

from simulator.domain.invisible_chars import INVISIBLE, visible
from simulator.domain.providers import PROVIDERS as PROVIDER_TABLE

PROVIDERS: dict[str, str] = {name: p.description for name, p in PROVIDER_TABLE.items()}


def split_model_string(value: str) -> tuple[str, str]:
    provider, sep, name = value.partition(":")
    return provider.strip().lower(), name.strip() if sep else ""


def check_model_string(value: str) -> str:
    """Return the model string cleaned, or raise ValueError naming the problem and the fix."""
    refuse_hidden_characters(value)
    value = value.strip()
    provider, name = split_model_string(value)
    if provider not in PROVIDERS:
        close = difflib.get_close_matches(provider, list(PROVIDERS), n=1)
        hint = f" Did you mean '{close[0]}:'?" if close else ""
        raise ValueError(
            f"unknown backend prefix {provider + ':'!r} in {value!r}.{hint} Known prefixes: "
            + ", ".join(f"{p}:" for p in PROVIDERS)
        )
    if not name:
        raise ValueError(f"model string {value!r} names no model; write e.g. '{provider}:NAME'")
    return f"{provider}:{name}"


def has_hidden_characters(value: str) -> bool:
    """A line break, tab or other control or invisible character: a copy-and-paste slip that
    would reach a server's URL or a file name unseen, or be stripped silently."""
    return any(ch in "\t\n\r" or INVISIBLE.match(ch) for ch in value)


def refuse_hidden_characters(value: str) -> None:
    """ValueError naming the first hidden character (surrounding spaces are still stripped)."""
    hidden = next((ch for ch in value if has_hidden_characters(ch)), None)
    if hidden is not None:
        raise ValueError(
            f"model string {visible(repr(value))} holds the control or invisible character "
            f"U+{ord(hidden):04X}; write the model string on one line with visible characters "
            "only, e.g. 'ollama:llama3'"
        )
