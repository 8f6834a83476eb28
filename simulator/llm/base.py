"""The one interface every backend implements, and the errors that tell retrying apart."""

from __future__ import annotations

from typing import NotRequired, Protocol, TypedDict

from pydantic import BaseModel, Field

from simulator.domain.params import GenerationParams


class ChatMessage(TypedDict):
    role: str  # "system" | "user" | "assistant"
    content: str
    # The speaker of a user message (speaker_format name_field). Every backend passes the dict
    # through whole: OpenAI-compatible servers take it; Ollama's /api/chat ignores fields it does
    # not know; llama.cpp and transformers hand it to the chat template, which renders it only if
    # the template reads `name` (SmolLM2's does not); the mock backend records it.
    name: NotRequired[str]


class Completion(BaseModel):
    """One model answer plus what a reviewer needs to trust it later."""

    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float = 0.0
    model_identity: dict = Field(default_factory=dict)  # digest, GGUF hash, HF commit or path
    ignored_params: list[str] = Field(default_factory=list)


class Backend(Protocol):
    """A chat model. `endpoint` names the concurrency pool (two Ollama hosts are two pools)."""

    model: str
    endpoint: str

    async def chat(self, messages: list[ChatMessage], params: GenerationParams) -> Completion: ...

    async def aclose(self) -> None: ...


class BackendError(Exception):
    """A failed model call. Subclasses decide whether the retry wrapper tries again."""


class FatalBackendError(BackendError):
    """Bad key, unknown model, missing extra: retrying cannot help."""


class TransientBackendError(BackendError):
    """Server error, timeout, refused connection, malformed answer: worth another try."""


class RateLimitedError(TransientBackendError):
    """HTTP 429. `retry_after` (seconds) comes from the server when it says so."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after
