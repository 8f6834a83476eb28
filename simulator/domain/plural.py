"""Counts with their nouns ("1 round", "2 rounds"), in every message and display.

The grammar is inflect's, so irregular nouns read right ("1 child", "2 children") and a noun
phrase is pluralised at its head ("1 agent turn", "2 agent turns").
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import inflect


@lru_cache(maxsize=1)
def inflect_engine() -> inflect.engine:
    """inflect, imported without typeguard's instrumentation.

    inflect decorates its engine with typeguard's `@typechecked`, which re-parses inflect's
    source 23 times at import (1.7 s on every CLI start). The checks are a debugging aid, so
    the decorator is swapped for the identity while inflect is imported; behaviour is unchanged.
    """
    import typeguard

    original = typeguard.typechecked

    def passthrough(target=None, **_options):
        return target if target is not None else (lambda inner: inner)

    typeguard.typechecked = passthrough
    try:
        import inflect
    finally:
        typeguard.typechecked = original
    return inflect.engine()


def nouns(count: int, noun: str) -> str:
    """`noun` in the number `count` asks for: "round" for 1, "rounds" otherwise."""
    return inflect_engine().plural_noun(noun, count)


def count(n: int, noun: str, *, thousands: bool = False) -> str:
    """`n` and its noun: "1 round", "2 rounds", "0 rounds"; `thousands`: "1,000 calls"."""
    number = f"{n:,}" if thousands else str(n)
    return f"{number} {nouns(n, noun)}"
