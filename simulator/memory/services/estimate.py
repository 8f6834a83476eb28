"""A memory stream's own calls in an estimate: one importance rating per record, and, with an
`openai:` embedder, the embedding requests of every record and every recall query (a local
embedder sends no request and costs nothing: spend has no rows of it, nor does the estimate).

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


def embedder_model(settings: MemorySettings) -> str | None:
    """The model string an embedder's requests are priced by (an OpenAI-protocol one by its
    model), None for one that runs in this process (the packaged MiniLM, sentence-transformers,
    the mock): it sends no request."""
    parsed = parse_embedder(settings.embedder, stored=True)
    return f"openai:{parsed.name}" if parsed.provider == "openai" else None


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
    `shape` placeholders) by the stream's `writer`, and with a remote embedder one request per
    step for the records and one for the recall `queries` (text -> how many), their tokens as
    if no text were cached (at most what is sent); the ratings of one step go out together,
    embeddings are not timed (they wait on nothing a step makes)."""
    if not settings.is_stream or not records:
        return []
    calls = sum(records.values())
    tokens_in = sum(
        n * shape.tokens(writer, importance_messages(name, text), known)
        for (name, text), n in records.items()
    )
    ratings = CallTally.of(writer, calls, tokens_in, calls * (RATING.max_tokens or 8), steps)
    model = embedder_model(settings)
    if model is None:
        return [ratings]
    per_message = shape.counter(writer).per_message
    texts: Counter[str] = Counter(queries)
    for (_, text), n in records.items():
        texts[text] += n
    embedded = sum(
        n * (shape.tokens(writer, [{"content": text}], known) - per_message)
        for text, n in texts.items()
    )
    requests = steps * (2 if queries else 1)  # a step's records, then its recall queries
    return [ratings, CallTally(model, model, requests, embedded, 0, 0)]
