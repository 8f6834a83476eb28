"""A memory stream's own calls in an estimate: one importance rating per record, and the
embeddings of every record and every recall query.

Why apart: every world with a stream makes these calls the same way (memory/engine/keeper.py),
so each world's estimate lists what its agents perceive and recall, and this module prices the
stream's work. Reflections and day plans depend on what the ratings say, so an estimate with a
stream counts none of them and says "at least".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from simulator.domain.llm_choice import LLMChoice
from simulator.memory.domain.embedder_strings import parse_embedder
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.engine.keeper import RATING
from simulator.memory.prompting.prompts import importance_messages
from simulator.services.estimate_parts import CallTally, Shape


def embedder_model(settings: MemorySettings) -> str:
    """The model string an embedder is priced by: an OpenAI one by its model, any other
    (the packaged MiniLM, sentence-transformers, the mock) runs here at no charge."""
    parsed = parse_embedder(settings.embedder, stored=True)
    if parsed.provider == "openai":
        return f"openai:{parsed.name}"
    return f"local:{parsed.provider}-embedder"


def stream_calls(
    settings: MemorySettings,
    writer: LLMChoice,
    records: Mapping[tuple[str, str], int],
    queries: Mapping[str, int],
    steps: int,
    shape: Shape,
    known: dict[str, LLMChoice],
) -> list[CallTally]:
    """The ratings of `records` ((agent name, text) -> how many such records; replies as
    `shape` placeholders) by the stream's `writer`, and one embedding batch per step for the
    records and the recall `queries` (text -> how many); the ratings of one step go out
    together, embeddings are counted in tokens (not calls) and not timed."""
    if not settings.is_stream or not records:
        return []
    calls = sum(records.values())
    tokens_in = sum(
        n * shape.tokens(writer, importance_messages(name, text), known)
        for (name, text), n in records.items()
    )
    ratings = CallTally.of(writer, calls, tokens_in, calls * (RATING.max_tokens or 8), steps)
    per_message = shape.counter(writer).per_message
    texts: Counter[str] = Counter(queries)
    for (_, text), n in records.items():
        texts[text] += n
    embedded = sum(
        n * (shape.tokens(writer, [{"content": text}], known) - per_message)
        for text, n in texts.items()
    )
    model = embedder_model(settings)
    embeddings = CallTally(model, model, 0, embedded, 0, 0)  # batches, not LLM calls
    return [ratings, embeddings]
