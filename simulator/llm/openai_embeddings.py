"""`openai:<model>[@<base_url>]` embedders: OpenAI's `/v1/embeddings`, or any server that speaks
it (vLLM, llama.cpp server, LM Studio, Ollama's /v1, the stub in simulator/testing).

Why a wrapper around the `openai` client: batching (up to `batch_size` texts per request, the
API takes 2048), rows returned in input order whatever order the server lists them in, one
error vocabulary with the chat backends (fatal, transient, rate limited), and a key that is
never logged, stored or repeated from a server's error text. The client's own retries (2, with
backoff) stay on until a retry wrapper for embedders exists beside llm/retry.py.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import openai

from simulator.llm.base import FatalBackendError, RateLimitedError, TransientBackendError
from simulator.llm.embeddings import EmbeddingAttempt, RequestLedger, failed
from simulator.llm.openai_backend import PLACEHOLDER_KEY, is_official, resolve_endpoint
from simulator.llm.retry import parse_retry_after
from simulator.llm.transport import classify, describe
from simulator.memory.domain.embedder_strings import split_model_url  # noqa: F401 (its old home)

BATCH_SIZE = 256


class OpenAIEmbedder:
    """Embeddings over HTTP; `embed` blocks, `aembed` awaits (for the engine's event loop)."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = BATCH_SIZE,
        dimensions: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        self.model = model
        self._endpoint = resolve_endpoint(base_url)
        self.base_url = self._endpoint.shown  # safe to show, log and store with the vectors
        self.official = is_official(self.base_url)
        self.name = f"openai:{model}" if self.official else f"openai:{model}@{self.base_url}"
        self.batch_size, self.dimensions = batch_size, dimensions
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and self.official:
            raise FatalBackendError(
                "OPENAI_API_KEY is not set; export it (or put it in .env) to use OpenAI "
                "embeddings, or name an OpenAI-compatible server: openai:<model>@<base url>."
            )
        options = {
            "api_key": key or PLACEHOLDER_KEY,
            "base_url": self._endpoint.url,
            "default_query": self._endpoint.query or None,
            "timeout": timeout,
            "max_retries": max_retries,
        }
        self._options: dict[str, Any] = options
        self._sync: openai.OpenAI | None = None
        self._async: openai.AsyncOpenAI | None = None

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r})"

    def embed(self, texts: list[str]) -> np.ndarray:
        if self._sync is None:
            self._sync = openai.OpenAI(**self._options)
        rows = []
        for batch in self._batches(texts):
            error: Exception | None = None
            try:
                rows += _rows(self._sync.embeddings.create(**self._request(batch)), len(batch))
            except openai.OpenAIError as exc:
                error = self._map_error(exc)
            if error is not None:  # raised outside `except`: the client's exception carries
                raise error  # the request, Authorization header included
        return _matrix(rows)

    async def aembed(self, texts: list[str], ledger: RequestLedger | None = None) -> np.ndarray:
        """The texts' vectors, one request per batch; `ledger` hears each request before it
        leaves and after it ends, with the tokens the server counted (`usage.prompt_tokens`)."""
        if self._async is None:
            self._async = openai.AsyncOpenAI(**self._options)
        rows: list[list[float]] = []
        for batch in self._batches(texts):
            if ledger is not None:
                await ledger.begin(batch)
            started = time.perf_counter()
            error: Exception | None = None
            try:
                answer = await self._async.embeddings.create(**self._request(batch))
                got = _rows(answer, len(batch))
            except openai.OpenAIError as exc:
                error = self._map_error(exc)
            except BaseException as exc:  # cancelled, or an answer of the wrong length
                if ledger is not None:
                    ledger.done(failed(batch, started, exc))
                raise
            if error is not None:
                if ledger is not None:
                    ledger.done(failed(batch, started, error))
                raise error
            if ledger is not None:
                seconds = time.perf_counter() - started
                ledger.done(EmbeddingAttempt(batch, _prompt_tokens(answer), seconds, _matrix(got)))
            rows += got
        return _matrix(rows)

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()
            self._sync = None

    async def aclose(self) -> None:
        self.close()
        if self._async is not None:
            await self._async.close()
            self._async = None

    def _batches(self, texts: list[str]) -> list[list[str]]:
        size = max(1, self.batch_size)
        return [list(texts[i : i + size]) for i in range(0, len(texts), size)]

    def _request(self, batch: list[str]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "input": batch}
        if self.dimensions is not None:
            request["dimensions"] = self.dimensions
        return request

    def _map_error(self, exc: Exception) -> Exception:
        """Our error for the client's, in our words: server text may echo the key."""
        where = self.base_url
        if isinstance(exc, openai.APIConnectionError):  # timeouts included
            timeout = self._options["timeout"]
            return TransientBackendError(describe(classify(exc), where, "OPENAI_BASE_URL", timeout))
        if isinstance(exc, openai.AuthenticationError):
            return FatalBackendError(
                f"{where} rejected the API key (HTTP 401); set OPENAI_API_KEY to a valid key."
            )
        if isinstance(exc, openai.NotFoundError):
            return FatalBackendError(
                f"{where} has no embedding model '{self.model}' (HTTP 404); check the name."
            )
        if isinstance(exc, openai.RateLimitError):
            wait = parse_retry_after(exc.response.headers)
            return RateLimitedError(f"{where} is rate limiting embeddings (HTTP 429).", wait)
        status = getattr(exc, "status_code", None)
        if isinstance(status, int) and status >= 500:
            return TransientBackendError(f"{where} failed to embed (HTTP {status}).")
        detail = f"HTTP {status}" if status else type(exc).__name__
        return FatalBackendError(f"{where} refused the embedding request ({detail}).")


def _rows(answer: Any, expected: int) -> list[list[float]]:
    data = sorted(answer.data, key=lambda item: item.index)
    if len(data) != expected:
        raise TransientBackendError(f"asked for {expected} embeddings, got {len(data)}")
    return [item.embedding for item in data]


def _prompt_tokens(answer: Any) -> int | None:
    """The tokens the server counted for the request, None when it does not say."""
    usage = getattr(answer, "usage", None)
    tokens = getattr(usage, "prompt_tokens", None) if usage is not None else None
    return tokens if isinstance(tokens, int) and tokens >= 0 else None


def _matrix(rows: list[list[float]]) -> np.ndarray:
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.asarray(rows, dtype=np.float32)
