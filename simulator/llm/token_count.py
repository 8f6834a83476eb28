"""Counting a prompt's tokens before it is sent, for estimates: the model's own tokenizer where
one is at hand offline, else a stated approximation.

Why offline only: an estimate is printed before anything runs, often on a laptop without the
model's server; downloading a tokenizer to print a number would be a surprise. A GGUF model
(local:) carries its vocabulary, a Hugging Face model (hf:) its tokenizer files; OpenAI's
encodings count only when tiktoken is installed and its files are already cached. Ollama's
models and every other case use 4 characters per token, which English text averages under
the common BPE tokenizers (expect +-25% on other languages and on code).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simulator.domain.llm_choice import LLMChoice

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # the role and separators a chat template adds around each message


@dataclass(frozen=True)
class TokenCounter:
    """How prompt text becomes a token count; `name` is what an estimate says it used."""

    name: str  # "tokenizer NAME" or "approximation: 4 characters per token"
    count: Callable[[str], int]
    per_message: int = MESSAGE_OVERHEAD  # tokens a chat template adds per message

    def messages(self, messages: list[dict]) -> int:
        return sum(self.count(str(m.get("content", ""))) + self.per_message for m in messages)


def _approximate(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


APPROXIMATION = TokenCounter(f"approximation: {CHARS_PER_TOKEN} characters per token", _approximate)
WORDS = TokenCounter("whitespace words (the loopback stub's count)", lambda t: len(t.split()), 0)

_CACHE: dict[str, TokenCounter] = {}
_LOCK = threading.Lock()


def counter_for(choice: LLMChoice) -> TokenCounter:
    """The counter for one LLM entry's prompts (cached per model string); never downloads."""
    model = choice.model
    with _LOCK:
        found = _CACHE.get(model)
    if found is not None:
        return found
    provider, _, name = model.partition(":")
    builder = {"local": _gguf, "hf": _hugging_face, "openai": _tiktoken}.get(provider.lower())
    counter = None
    if builder is not None:
        try:
            counter = builder(name)
        except Exception:  # a tokenizer that cannot load offline: the approximation says so
            counter = None
    counter = counter or APPROXIMATION
    with _LOCK:
        _CACHE[model] = counter
    return counter


def _gguf(name: str) -> TokenCounter | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    from simulator.llm.llamacpp_backend import resolve_model_path

    path = resolve_model_path(name)
    if not path.is_file():
        return None
    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    with suppress_stdout_stderr(disable=False):  # llama.cpp writes its context notes to fd 2
        vocab = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    atexit.register(vocab.close)  # freed before the interpreter tears llama_cpp down

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return TokenCounter(f"tokenizer {path.name}", count)


def _hugging_face(name: str) -> TokenCounter | None:
    if importlib.util.find_spec("transformers") is None:
        return None
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    return TokenCounter(f"tokenizer {name}", count)


_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def _tiktoken(name: str) -> TokenCounter | None:
    if importlib.util.find_spec("tiktoken") is None:
        return None
    import tiktoken

    encoding = "o200k_base" if name.startswith(("gpt-4o", "gpt-4.1", "gpt-5", "o")) else None
    if encoding is None:
        return None
    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    cache = Path(folder or Path(tempfile.gettempdir()) / "data-gym-cache")
    blob = hashlib.sha1(_TIKTOKEN_URL.format(encoding).encode()).hexdigest()
    if not (cache / blob).is_file():  # not cached: loading it would download
        return None
    enc = tiktoken.get_encoding(encoding)
    return TokenCounter(f"tokenizer tiktoken {encoding}", lambda t: len(enc.encode(t)), 3)
