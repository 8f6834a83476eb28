"""A world's run raises the young-collection threshold while it runs and puts it back after."""

from __future__ import annotations

import gc

import pytest

from simulator.engine.gc_budget import YOUNG_THRESHOLD, fewer_collections


@pytest.fixture
def threshold():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_raised_inside_and_restored_after(threshold):
    with fewer_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_overlapping_runs_restore_when_the_last_ends(threshold):
    first, second = fewer_collections(), fewer_collections()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD  # the second run still goes on
    second.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_when_the_run_fails(threshold):
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_never_lowered_nor_switched_on(threshold):
    gc.set_threshold(50_000, 10, 10)
    with fewer_collections():
        assert gc.get_threshold()[0] == 50_000
    gc.set_threshold(0, 10, 10)  # a user's `gc.set_threshold(0)`: collection off
    with fewer_collections():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold() == (0, 10, 10)
