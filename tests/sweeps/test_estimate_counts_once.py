"""A sweep's estimate renders the same prompt texts for cell after cell (the day openings of a
100-cell sweep of 1 to 100 days: 40,000 texts, 205 different): each distinct text goes through
the tokenizer once per estimate, and the counts are those of counting each one anew."""

from __future__ import annotations

from simulator.domain.llm_choice import LLMChoice
from simulator.llm.token_count import TokenCounter
from simulator.services.estimate_parts import Shape

MODEL = LLMChoice(model="mock:a")
OTHER = LLMChoice(model="mock:b")


def test_each_distinct_text_is_tokenized_once_per_counter():
    seen: list[str] = []

    def words(text: str) -> int:
        seen.append(text)
        return len(text.split())

    counters = {
        "mock:a": TokenCounter("words", words, 2),
        "mock:b": TokenCounter("characters", lambda t: seen.append(t) or len(t), 0),
    }
    shape = Shape(lambda choice: counters[choice.model], lambda model: None)
    messages = [{"content": "a b c"}, {"content": "d e"}, {"content": "a b c"}]
    assert shape.tokens(MODEL, messages, {}) == (3 + 2) + (2 + 2) + (3 + 2)
    assert shape.tokens(MODEL, messages, {}) == 14
    assert seen == ["a b c", "d e"]
    assert shape.tokens(OTHER, messages[:1], {}) == 5  # another counter counts it its own way
    assert seen == ["a b c", "d e", "a b c"]
