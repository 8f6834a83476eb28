"""Sampling parameters shared by every backend, validated once so a typo never reaches a model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from simulator.domain.limits import MAX_SEED


class GenerationParams(BaseModel):
    """What a researcher may set per LLM. Every field is optional; a backend applies what it can
    and reports the rest as ignored (see `Completion.ignored_params`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    top_k: int | None = Field(default=None, ge=1, le=1000)
    max_tokens: int | None = Field(default=None, ge=1, le=32768)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    stop: list[str] | None = Field(default=None, max_length=8)
    num_ctx: int | None = Field(default=None, ge=128, le=1_048_576)
    # > 1 discourages repeating tokens already written (llama.cpp, Ollama, HF, and OpenAI-
    # compatible servers); the tiny bundled model loops without it (bench/demo_sampling.py)
    repeat_penalty: float | None = Field(default=None, ge=0.5, le=2.0)

    def merge(self, other: GenerationParams | None) -> GenerationParams:
        """Fields set in `other` win; used to layer per-call overrides on an LLM's defaults."""
        if other is None:
            return self
        data = self.model_dump(exclude_none=True)
        data.update(other.model_dump(exclude_none=True))
        return GenerationParams(**data)

    def as_dict(self) -> dict:
        return self.model_dump(exclude_none=True)
