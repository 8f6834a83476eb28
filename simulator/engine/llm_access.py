"""One place that turns an experiment's LLM choice into a resilient, pooled backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simulator.domain.experiment import LLMChoice
from simulator.llm.registry import create_backend
from simulator.llm.retry import PoolRegistry, ResilientBackend, RetryPolicy


class LLMAccess:
    """Backends are created once per (model, base URL) and share one pool per endpoint."""

    def __init__(
        self,
        pools: PoolRegistry | None = None,
        policy: RetryPolicy | None = None,
        on_pull_progress: Callable[[str, int | None, int | None], Any] | None = None,
        factory: Callable[..., Any] = create_backend,
        timeout_s: float | None = None,
    ):
        self.pools = pools or PoolRegistry()
        self.policy = policy or RetryPolicy()
        self._on_pull_progress = on_pull_progress
        self._factory = factory
        self._timeout_s = timeout_s  # per HTTP call (openai, ollama); None keeps their defaults
        self._backends: dict[tuple[str, str | None], ResilientBackend] = {}

    def get(self, choice: LLMChoice) -> ResilientBackend:
        key = (choice.model, choice.base_url)
        if key not in self._backends:
            kwargs: dict[str, Any] = {"base_url": choice.base_url}
            if self._on_pull_progress is not None and choice.model.startswith("ollama:"):
                kwargs["on_pull_progress"] = self._on_pull_progress
            if self._timeout_s is not None and choice.model.startswith(("ollama:", "openai:")):
                kwargs["timeout"] = self._timeout_s
            backend = self._factory(choice.model, **kwargs)
            self._backends[key] = self.pools.wrap(backend, self.policy)
        return self._backends[key]

    async def preflight(self, choices: list[LLMChoice]) -> None:
        """Check every distinct model before anything is written (host up, key set, model known)."""
        seen = set()
        for choice in choices:
            key = (choice.model, choice.base_url)
            if key in seen:
                continue
            seen.add(key)
            await self.get(choice).preflight()

    async def aclose(self) -> None:
        for backend in self._backends.values():
            await backend.aclose()
        self._backends.clear()
