"""Fewer garbage collections while a world runs: its rounds allocate many short-lived objects.

CPython runs a young collection every 700 net allocations of container objects and, every
100 of those, a full one that walks every live object. A round of 10,000 agents keeps its
graph, its agents and the store's rows alive, so the full collections walked them again and
again: a third of the process's CPU in a 10,000-agent network round. With the young threshold
at 10,000 the same round spends a few percent in the collector, and peak memory is unchanged
(cycles are still collected, in larger batches).

The threshold is raised while at least one run is in progress in this process (runs may
overlap: a sweep's conversations) and the one found before is put back when the last ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000  # net container allocations between young collections

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the young-generation threshold to YOUNG_THRESHOLD (never lower it) for the block."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            young, middle, old = _saved
            if young != 0:  # 0: collection is switched off by the user; leave it so
                gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
