"""What a model's tokens cost: a price per million tokens, found for a model string.

The experiment's own `price:` on an LLM entry wins, then the shipped table; models that run on
the researcher's machine (local, Ollama, hf, mock) cost nothing. An unknown price is None,
never 0: money is then reported as unknown rather than as free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

LOCAL_PROVIDERS = ("local", "ollama", "hf", "mock")
TABLE_SOURCE = "table 2026-11-01"

# US dollars per million tokens: input, output, cached input
_TABLE: dict[str, tuple[float, float, float | None]] = {
    "openai:gpt-4o-mini": (0.15, 0.60, 0.075),
    "openai:gpt-4o": (2.50, 10.00, 1.25),
}


@dataclass(frozen=True)
class Price:
    """Money per million tokens, in US dollars, and where the figure came from."""

    input_per_million: float
    output_per_million: float
    cached_input_per_million: float | None = None
    source: str = ""

    def cost(self, tokens_in: int, tokens_out: int, cached_in: int = 0) -> float:
        """Dollars for one call; cached input tokens at their own price where one is given."""
        cached_rate = self.cached_input_per_million
        if cached_rate is None:
            cached_rate = self.input_per_million
        fresh = max(tokens_in - cached_in, 0)
        total = (
            fresh * self.input_per_million
            + cached_in * cached_rate
            + tokens_out * self.output_per_million
        )
        return total / 1_000_000


def price_for(llm: str, override: Mapping[str, float] | None = None) -> Price | None:
    """The price of model string `llm`: the experiment LLM's `price:` override first (keys
    input, output, cached_input), then the shipped table; local models cost 0 (source
    "local"). None: the price is unknown (never 0)."""
    if override:
        return Price(
            float(override["input"]),
            float(override["output"]),
            None if override.get("cached_input") is None else float(override["cached_input"]),
            "experiment",
        )
    model = llm.split("@", 1)[0].strip()
    if model.partition(":")[0].lower() in LOCAL_PROVIDERS:
        return Price(0.0, 0.0, 0.0, "local")
    row = _TABLE.get(model)
    if row is None:
        return None
    return Price(row[0], row[1], row[2], TABLE_SOURCE)
