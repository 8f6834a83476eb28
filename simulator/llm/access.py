"""One place that turns an experiment's LLM choice into a resilient, pooled backend."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.providers import provider_of
from simulator.errors import UserError
from simulator.llm.registry import create_backend
from simulator.llm.retry import PoolRegistry, ResilientBackend, RetryPolicy


def llm_timeout_from_env() -> float | None:
    """SIM_LLM_TIMEOUT: seconds to wait for one model reply; refused unless a positive number."""
    raw = os.environ.get("SIM_LLM_TIMEOUT")
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and 0 < value <= 86_400):
        raise UserError(
            f"{raw!r} is not a number of seconds between 0 and 86400",
            field="SIM_LLM_TIMEOUT",
            fix="set e.g. SIM_LLM_TIMEOUT=300, or unset it",
        )
    return value


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
        # per HTTP call (openai, ollama); SIM_LLM_TIMEOUT, else the backends' own defaults
        self._timeout_s = timeout_s if timeout_s is not None else llm_timeout_from_env()
        self._backends: dict[tuple[str, str | None], ResilientBackend] = {}

    def get(self, choice: LLMChoice) -> ResilientBackend:
        key = (choice.model, choice.base_url)
        if key not in self._backends:
            kwargs: dict[str, Any] = {"base_url": choice.base_url}
            provider = provider_of(choice.model)
            if self._on_pull_progress is not None and provider and provider.pulls_models:
                kwargs["on_pull_progress"] = self._on_pull_progress
            if self._timeout_s is not None and provider and provider.http:
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
