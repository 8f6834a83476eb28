"""`hf:PATH_OR_ID`: a transformers causal LM run in-process, with concurrent calls batched.

Why in-process and batched: a simulation runs many agents at once, and a GPU generates for 32
prompts in about the time it takes for one. Each `chat` renders the tokenizer's chat template,
then waits on a `DynamicBatcher` that merges concurrent requests with equal generation settings
into one left-padded `generate` call in a worker thread. The model loads on the first call (it is
slow and may be large), on CUDA when available, else on the CPU. With HF_HUB_OFFLINE=1, or when
the name is a local path, nothing is fetched from the Hugging Face hub.

Seeds: each seeded request samples with its own generator (`torch.Generator` seeded with the
request's seed), through the Gumbel-max trick: the batch decodes greedily over the warped logits
(temperature, top-k, top-p, as transformers applies them) plus Gumbel noise drawn row by row from
each row's generator, which is exactly a sample from the warped distribution. A row's draws so
depend on its seed alone, not on its batch companions: requests with different seeds (every call
of a seeded grid stage) share one `generate`, and a seeded request gives the same text alone or
batched, up to the rounding differences left padding can bring.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch  # ImportError here is what the registry turns into an install hint
import transformers
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LogitsProcessor,
    LogitsProcessorList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)
from transformers.utils import logging as hf_logging

from simulator.domain.params import GenerationParams
from simulator.llm.base import ChatMessage, Completion, FatalBackendError
from simulator.llm.hf_batcher import (
    DEFAULT_BATCH_WAIT_MS,
    DEFAULT_MAX_BATCH_SIZE,
    BatchRequest,
    DynamicBatcher,
)

DEFAULT_MAX_NEW_TOKENS = 256
# transformers 4.56 renamed `torch_dtype` to `dtype`; the old name warns in 5.x.
_DTYPE_KW = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"


@dataclass
class _Loaded:
    model: Any
    tokenizer: Any
    pad_id: int
    eos_ids: frozenset[int]
    default_do_sample: bool
    identity: dict


@dataclass
class _Generated:
    text: str
    tokens_out: int


class HFBackend:
    """One transformers model; `endpoint` is one concurrency pool per model."""

    def __init__(
        self,
        path_or_id: str,
        *,
        device: str | None = None,
        batch_wait_ms: float = DEFAULT_BATCH_WAIT_MS,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
        default_max_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        min_new_tokens: int | None = None,
    ) -> None:
        self.model = path_or_id
        self.endpoint = f"hf:{path_or_id}"
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.default_max_tokens = default_max_tokens
        self.min_new_tokens = min_new_tokens  # benchmark knob: forces equal-length outputs
        self.batcher = DynamicBatcher(
            self._run_batch, batch_wait_ms=batch_wait_ms, max_batch_size=max_batch_size
        )
        self._loaded: _Loaded | None = None
        self._load_lock = threading.Lock()
        self._tokenizer_lock = threading.Lock()  # fast tokenizers are not safe across threads

    async def preflight(self) -> None:
        """Fail early, without loading, when a local path names nothing."""
        _check_local_path(self.model)

    async def chat(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        start = time.perf_counter()
        if not messages:
            raise FatalBackendError("The hf backend was called with no messages.")
        loaded = self._loaded or await asyncio.to_thread(self._load)
        # Encoding stays on the loop (about a millisecond): concurrent callers then reach the
        # queue together and share one batch instead of trickling in from worker threads.
        prompt_ids = self._encode(loaded, messages)
        _, ignored = _plan(params, loaded.default_do_sample)
        request = BatchRequest(prompt_ids, group_key=_group_key(params), options=params)
        result: _Generated = await self.batcher.submit(request)
        return Completion(
            text=_cut_at_stop(result.text, params.stop),
            tokens_in=len(prompt_ids),
            tokens_out=result.tokens_out,
            latency_s=time.perf_counter() - start,
            model_identity=dict(loaded.identity),
            ignored_params=ignored,
        )

    async def identity(self) -> dict:
        """The loaded model's identity (its commit when it came from the hub)."""
        loaded = self._loaded or await asyncio.to_thread(self._load)
        return dict(loaded.identity)

    async def aclose(self) -> None:
        """Stop the batcher and drop the model so its (GPU) memory can be freed."""
        await self.batcher.aclose()
        self._loaded = None
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()

    # --- worker-thread side -------------------------------------------------------------------

    def _load(self) -> _Loaded:
        with self._load_lock:
            if self._loaded is None:
                self._loaded = _load_model(self.model, self.device)
            return self._loaded

    def _encode(self, loaded: _Loaded, messages: list[ChatMessage]) -> list[int]:
        with self._tokenizer_lock:
            text = loaded.tokenizer.apply_chat_template(
                list(messages), tokenize=False, add_generation_prompt=True
            )
            return list(loaded.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _run_batch(self, requests: list[BatchRequest]) -> list[_Generated]:
        """One left-padded `generate` for requests that share generation settings."""
        loaded = self._load()
        params: GenerationParams = requests[0].options
        width = max(len(r.prompt_ids) for r in requests)
        input_ids = torch.full((len(requests), width), loaded.pad_id, dtype=torch.long)
        attention = torch.zeros((len(requests), width), dtype=torch.long)
        for row, request in enumerate(requests):
            n = len(request.prompt_ids)
            input_ids[row, width - n :] = torch.tensor(request.prompt_ids, dtype=torch.long)
            attention[row, width - n :] = 1
        kwargs, _ = _plan(params, loaded.default_do_sample)
        kwargs.setdefault("max_new_tokens", self.default_max_tokens)
        if self.min_new_tokens:
            kwargs["min_new_tokens"] = min(self.min_new_tokens, kwargs["max_new_tokens"])
        if kwargs.get("do_sample", loaded.default_do_sample) and params.seed is not None:
            seeds = [request.options.seed for request in requests]
            kwargs = _row_seeded(kwargs, loaded.model.generation_config, seeds, self.device)
        with torch.inference_mode():
            output = loaded.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                pad_token_id=loaded.pad_id,
                eos_token_id=sorted(loaded.eos_ids),
                **kwargs,
            )
        results = []
        with self._tokenizer_lock:
            for row in output[:, width:].tolist():
                n = _until_eos(row, loaded.eos_ids)
                text = loaded.tokenizer.decode(row[:n], skip_special_tokens=True)
                results.append(_Generated(text=text, tokens_out=n))
        return results


def _load_model(path_or_id: str, device: str) -> _Loaded:
    local = _check_local_path(path_or_id)
    offline = local is not None or os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    source = str(local) if local is not None else path_or_id
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # the core never prints; the CLI shows its own progress
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=offline)
        # The checkpoint's own dtype on a GPU; float32 on the CPU, where half precision crawls.
        dtype = "auto" if device.startswith("cuda") else torch.float32
        model = AutoModelForCausalLM.from_pretrained(
            source, local_files_only=offline, **{_DTYPE_KW: dtype}
        )
    except (OSError, ValueError) as exc:
        hint = " (HF_HUB_OFFLINE is set, so only cached models load)" if offline else ""
        raise FatalBackendError(
            f"Could not load the Hugging Face model {path_or_id!r}{hint}: {exc}"
        ) from exc
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    if not getattr(tokenizer, "chat_template", None):
        raise FatalBackendError(
            f"The tokenizer of {path_or_id!r} has no chat template; use an instruct/chat model."
        )
    model.to(device).eval()
    eos = model.generation_config.eos_token_id
    eos_ids = {eos} if isinstance(eos, int) else set(eos or [])
    if tokenizer.eos_token_id is not None:
        eos_ids.add(tokenizer.eos_token_id)
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = min(eos_ids) if eos_ids else 0
    identity = {
        "provider": "hf",
        "path_or_id": path_or_id,
        "commit": getattr(model.config, "_commit_hash", None),
        "device": str(device),
    }
    return _Loaded(
        model,
        tokenizer,
        pad_id,
        frozenset(eos_ids),
        bool(model.generation_config.do_sample),
        identity,
    )


def _check_local_path(path_or_id: str) -> Path | None:
    """A path (existing, or written like one) is local; anything else is a hub id."""
    path = Path(path_or_id).expanduser()
    if path.exists():
        return path
    if path_or_id.startswith(("/", ".", "~")) or "\\" in path_or_id:
        raise FatalBackendError(
            f"The Hugging Face model folder {path_or_id!r} does not exist; "
            "give the folder written by save_pretrained, or a hub id such as 'org/name'."
        )
    return None


def _plan(params: GenerationParams, default_do_sample: bool) -> tuple[dict, list[str]]:
    """`generate` keyword arguments for `params`, and the fields that cannot apply."""
    kwargs: dict[str, Any] = {}
    ignored: list[str] = []
    if params.max_tokens is not None:
        kwargs["max_new_tokens"] = params.max_tokens
    sampling = default_do_sample
    if params.temperature is not None:
        sampling = params.temperature > 0
        kwargs["do_sample"] = sampling
        if sampling:
            kwargs["temperature"] = params.temperature
    for name in ("top_p", "top_k"):
        value = getattr(params, name)
        if value is not None and sampling:
            kwargs[name] = value
        elif value is not None and params.temperature is None:
            ignored.append(name)  # the model decodes greedily by default; temperature 0 is explicit
    if params.repeat_penalty is not None:
        kwargs["repetition_penalty"] = params.repeat_penalty
    if params.num_ctx is not None:
        ignored.append("num_ctx")  # the context length is the model's own
    return kwargs, ignored


def _group_key(params: GenerationParams) -> tuple:
    """Requests may share a `generate` when these agree; stop strings are applied afterwards.
    Seeds may differ: each seeded row samples from its own generator (`_row_seeded`)."""
    return (
        params.temperature,
        params.top_p,
        params.top_k,
        params.max_tokens,
        params.seed is not None,
        params.repeat_penalty,
    )


class _RowGumbel(LogitsProcessor):
    """Gumbel noise per row from that row's own generator: the argmax of warped logits plus
    Gumbel(0, 1) noise is a sample from their softmax (the Gumbel-max trick)."""

    def __init__(self, seeds: list[int], device: str) -> None:
        self._device = torch.device(device)
        self._generators = [torch.Generator(device=self._device).manual_seed(s) for s in seeds]

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        width = scores.shape[-1]
        uniform = torch.stack(
            [torch.rand(width, generator=g, device=self._device) for g in self._generators]
        )
        gumbel = -torch.log(-torch.log(uniform.clamp(min=1e-20, max=1 - 1e-7)))
        return scores.float() + gumbel


def _row_seeded(kwargs: dict, config: Any, seeds: list[int], device: str) -> dict:
    """`generate` arguments that sample each row with its own seed: greedy decoding over the
    warpers sampling would apply (the request's values, else the model's defaults) and
    `_RowGumbel`, all applied after transformers' own processors (repetition penalty, minimum
    length), in the order transformers applies its warpers."""
    planned = dict(kwargs)
    temperature = planned.pop("temperature", None) or config.temperature
    top_k = planned.pop("top_k", None) or config.top_k
    top_p = planned.pop("top_p", None) or config.top_p
    processors: list[LogitsProcessor] = []
    if temperature is not None and temperature != 1.0:
        processors.append(TemperatureLogitsWarper(temperature))
    if top_k:
        processors.append(TopKLogitsWarper(top_k))
    if top_p is not None and top_p < 1.0:
        processors.append(TopPLogitsWarper(top_p))
    processors.append(_RowGumbel(seeds, device))
    planned["do_sample"] = False
    planned["logits_processor"] = LogitsProcessorList(processors)
    return planned


def _until_eos(tokens: list[int], eos_ids: frozenset[int]) -> int:
    for i, token in enumerate(tokens):
        if token in eos_ids:
            return i
    return len(tokens)


def _cut_at_stop(text: str, stop: list[str] | None) -> str:
    cuts = [i for s in stop or [] if s and (i := text.find(s)) >= 0]
    return text[: min(cuts)] if cuts else text


def create_backend(name: str, base_url: str | None = None, **kw: Any) -> HFBackend:
    """Registry factory: `name` is the path or hub id after `hf:`; `kw` are HFBackend options."""
    if base_url is not None:
        raise FatalBackendError("hf models run in this process; a base URL does not apply.")
    kw.pop("on_pull_progress", None)  # nothing is pulled: the model is local files
    path_or_id = name.removeprefix("hf:")
    if not path_or_id:
        raise FatalBackendError("hf: needs a model folder or hub id, e.g. 'hf:/models/my-model'.")
    return HFBackend(path_or_id, **kw)
