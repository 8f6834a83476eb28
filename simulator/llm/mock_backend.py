"""`mock:NAME`: a deterministic in-process model for users trying the tool and for tests.

Why: conversations, sweeps and the CLI can be exercised with no model and no network (like
inspect_ai's `mockllm` or simonw/llm's `MockModel`). Replies can be scripted with `enqueue`,
including exceptions to inject faults; every call is recorded for assertions.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from simulator.domain.params import GenerationParams
from simulator.llm.base import ChatMessage, Completion

_EXAMPLE = re.compile(r"^For example: (\{.*\})\s*$", re.MULTILINE)
_IGNORED = (
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "num_ctx",
    "repeat_penalty",
)  # a script has no sampling


@dataclass(frozen=True)
class MockCall:
    messages: list[ChatMessage]
    params: GenerationParams


def _words(text: str) -> int:
    return len(text.split())


class MockBackend:
    """Answers "[NAME] reply N to: <last user message>" unless a reply was enqueued; asked for
    a JSON object with an example (a judge's answer format ends "For example: {...}"), it
    answers the example, so `llm-sim score --scorer judge:RUBRIC --llm mock:NAME` completes.

    N is 1 + the assistant turns in the prompt (the agent's own earlier replies), so a reply
    depends on its prompt alone: the conversations of a sweep sharing one backend, and a replay
    of any of them, get the same replies to the same prompts."""

    def __init__(self, name: str = "mock", latency_s: float = 0.0) -> None:
        self.name = name
        self.model = name
        self.endpoint = f"mock:{name}"
        self.latency_s = latency_s
        self.calls: list[MockCall] = []
        self._script: deque[str | BaseException | type[BaseException]] = deque()

    def enqueue(self, *items: str | BaseException | type[BaseException]) -> None:
        """Script the next replies; an exception (instance or class) is raised instead."""
        self._script.extend(items)

    async def identity(self) -> dict:
        return {"provider": "mock", "model": self.name}

    async def chat(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        self.calls.append(MockCall(list(messages), params))
        number = 1 + sum(m["role"] == "assistant" for m in messages)
        item = self._script.popleft() if self._script else None
        started = time.perf_counter()
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if isinstance(item, type) and issubclass(item, BaseException):
            raise item(f"scripted {item.__name__} from {self.endpoint}")
        if isinstance(item, BaseException):
            raise item
        text = item if item is not None else self._default_reply(messages, number)
        text, _ = _apply_limits(text, params.stop, params.max_tokens)
        return Completion(
            text=text,
            tokens_in=sum(_words(m["content"]) for m in messages),
            tokens_out=_words(text),
            latency_s=time.perf_counter() - started,
            model_identity={"provider": "mock", "model": self.name},
            ignored_params=[n for n in _IGNORED if getattr(params, n) is not None],
        )

    def _default_reply(self, messages: list[ChatMessage], number: int) -> str:
        last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        example = _EXAMPLE.search(last)
        if example:
            return example.group(1)
        last = " ".join(last.split())
        if len(last) > 60:
            last = last[:57] + "..."
        return f"[{self.name}] reply {number} to: {last}"

    async def preflight(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _apply_limits(text: str, stop: list[str] | None, max_tokens: int | None) -> tuple[str, bool]:
    """Cut at the first stop string and at `max_tokens` words, as a model would stop."""
    for s in stop or ():
        if s and s in text:
            text = text[: text.index(s)]
    words = text.split(" ")
    if max_tokens is not None and len(words) > max_tokens:
        return " ".join(words[:max_tokens]), True
    return text, False


def create_backend(name: str, base_url: str | None = None, **kw: Any) -> MockBackend:
    """Registry factory for `mock:NAME`; `base_url` is meaningless here and ignored."""
    return MockBackend(name, latency_s=float(kw.get("latency_s", 0.0)))
