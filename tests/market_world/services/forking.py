"""The market's replays and forks (simulator/services/fork_parts.py): it forks at a round; a
fork or replay is stored and run as any of its runs, and its one model is the spec's `llm` (the
house's defaults)."""

from __future__ import annotations

from market_world.domain.kind import Spec
from market_world.engine.run import last_offers


def last_complete(spec: Spec, rows: list[dict]) -> int:
    return last_offers(spec, rows)[0]
