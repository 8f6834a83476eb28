"""In every registered world, `conversation show` on an embedded store that is ready answers
from its files (store/file_store.py) with the same output, byte for byte, as from the opened
store: a finished run and a fork of it (whose shared prefix is read from its parent), as text,
as JSON and with every call's prompts; and `experiment show` and `experiment list` likewise.

Each command runs twice through the real `main()` in this process: once with the opened store
refused (so the files must answer), once with the files refused (so the store answers)."""

from __future__ import annotations

import pytest

from simulator.cli.context import AppContext


def _store_refused(self: AppContext):
    raise AssertionError("the command opened the store: its files should have answered")


def both_ways(world, monkeypatch, *args: str):
    """`llm-sim ARGS` on the world's store from the files, then from the store: the same."""
    with monkeypatch.context() as patch:
        patch.setattr(AppContext, "store", property(_store_refused))
        files = world.cli(*args)
    with monkeypatch.context() as patch:
        patch.setattr(AppContext, "file_reader", lambda self: None)
        opened = world.cli(*args)
    assert (files.code, files.out, files.err) == (opened.code, opened.out, opened.err), args
    assert files.code == 0, files.err[-2000:]
    return files


@pytest.fixture
def forked(world) -> str:
    """A fork of the world's run at its sample's fork point (made once per world)."""
    if not getattr(world, "fork_id", None):
        made = world.ok(
            "conversation", "fork", world.run_id, "--at", world.sample.fork_at, "--json"
        )
        [entry] = made.json()["conversations"]
        world.fork_id = entry["conversation_id"]
    return world.fork_id


@pytest.mark.parametrize(
    "flags", [[], ["--json"], ["--prompts"], ["--prompts", "--json"]], ids=lambda f: " ".join(f)
)
def test_showing_a_run_and_its_fork_is_the_same_from_the_files(flags, world, forked, monkeypatch):
    shown = both_ways(world, monkeypatch, "conversation", "show", world.run_id, *flags)
    assert world.run_id in shown.out
    child = both_ways(world, monkeypatch, "conversation", "show", forked, *flags)
    if "--json" in flags:
        rows = child.json()[world.sample.rows]
        shared = world.sample.fork_shared
        assert {row["conversation_id"] for row in rows[:shared]} == {world.run_id}
        assert ("calls" in child.json()) is ("--prompts" in flags)


def test_the_worlds_experiment_is_listed_and_shown_the_same_from_the_files(world, monkeypatch):
    for args in (["list"], ["list", "--json"], ["show", world.experiment_id, "--json"]):
        both_ways(world, monkeypatch, "experiment", *args)
