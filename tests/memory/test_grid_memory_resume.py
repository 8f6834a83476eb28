"""A grid run with the whole memory stream (ratings, reflections, plans) cancelled at any call
resumes to the uninterrupted run: the same streams, rows and prompts, nothing answered twice.

Recency depends on each record's last access, and every retrieval moves it. The keeper holds
those moves until the step's rows are stored (engine/memory_keeper.py); stored at once, a step
cut after a retrieval would be rerun from other recency scores, other prompts, and stop with
"the run no longer replays its own history". A kill between the rows and those writes is
covered by the rows' own `accessed` list, written again on resume."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML, run_grid

from simulator.memory.engine.keeper import COUNTERS, IMPORTANCE_FALLBACKS, MemoryKeeper
from simulator.memory.testing.replies import memory_stream_reply
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.grid.services import runs as grid_runs

STREAM = {"kind": "stream", "embedder": "mock:16", "reflection_threshold": 30, "top_k": 3}
AGENTS, STEPS = 3, 3


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.002) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        # "seven" does not parse: every rating falls back to 4, and each one is counted
        server.reply_fn = memory_stream_reply(rating="seven")
        yield server


def start(store, tmp_path) -> str:
    doc = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
    doc["memory"] = STREAM
    path = tmp_path / "grid_stream.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    view = exp_service.import_yaml(store, path, "alice")
    world = {"agents": AGENTS, "steps": STEPS, "radius": 25}
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=5, world=world)
    return run_service.create_run(store, view, spec, "alice")["_id"]


def shape(store, run_id: str) -> dict:
    """Everything the run stored, its own id prefix taken out of every memory id."""

    def local(record_id: str) -> str:
        return record_id.split("-m", 1)[1]

    streams = [
        [
            (
                r.type,
                r.text,
                r.importance,
                [local(e) for e in r.evidence],
                r.created,
                r.last_accessed,
            )
            for r in store.memories.stream(run_id, i)
        ]
        for i in range(AGENTS)
    ]
    rows = [
        (
            r["step"],
            r["agent"],
            r["message"],
            r["memory"],
            r["move"],
            [local(i) for i in r["retrieved"]],
        )
        for r in store.grid_steps.for_run(run_id)
    ]
    done = [c for c in store.calls.for_conversation(run_id) if c["state"] == "done"]
    counters = store.conversations.get(run_id)["counters"]
    return {
        "streams": streams,
        "rows": rows,
        "prompts": sorted(c["prompt_hash"] for c in done),
        "counters": {name: counters[name] for name in COUNTERS},
    }


def answered_once(store, run_id: str) -> bool:
    done = [c for c in store.calls.for_conversation(run_id) if c["state"] == "done"]
    keys = Counter((c["purpose"], c["day"], c["index"], c["agent"]) for c in done)
    return set(keys.values()) == {1}


def test_a_run_cut_at_any_call_resumes_to_the_uninterrupted_run(embedded, stub, tmp_path):
    whole = start(embedded, tmp_path)
    assert run_grid(embedded, whole).status == "done"
    expected = shape(embedded, whole)
    purposes = Counter(c["purpose"] for c in embedded.calls.for_conversation(whole))
    assert purposes["memory_questions"] and purposes["memory_plan"]  # reflections and plans
    # every rating fell back, and the counters of a resumed run continue, not restart
    assert expected["counters"][IMPORTANCE_FALLBACKS] == purposes["memory_importance"] > 0
    calls = len(expected["prompts"])
    cuts = list(range(calls // 4, calls - 3, max(1, calls // 12)))
    assert len(cuts) >= 8
    for cut_at in cuts:
        cut = start(embedded, tmp_path)
        assert run_grid(embedded, cut, cancel_after=cut_at) is None, cut_at
        assert run_grid(embedded, cut).status == "done", cut_at
        assert shape(embedded, cut) == expected, f"cut after {cut_at} of {calls} calls"
        assert answered_once(embedded, cut), cut_at


def test_accesses_lost_between_the_rows_and_their_write_are_written_again(
    embedded, stub, tmp_path, monkeypatch
):
    whole = start(embedded, tmp_path)
    assert run_grid(embedded, whole).status == "done"
    cut = start(embedded, tmp_path)
    store_accesses, written = MemoryKeeper.store_accesses, []

    def killed_after_step_2s_rows(self, accessed=None) -> None:
        if accessed is None:  # the held accesses, written after a step's rows
            written.append(1)
            if len(written) == 2:  # step 1's written; step 2's rows stored, accesses not
                raise asyncio.CancelledError
        store_accesses(self, accessed)

    monkeypatch.setattr(MemoryKeeper, "store_accesses", killed_after_step_2s_rows)
    assert run_grid(embedded, cut) is None
    monkeypatch.setattr(MemoryKeeper, "store_accesses", store_accesses)
    assert {r["step"] for r in embedded.grid_steps.for_run(cut)} == {1, 2}
    assert all(r["accessed"] for r in embedded.grid_steps.for_run(cut) if r["step"] == 2)
    assert run_grid(embedded, cut).status == "done"
    assert shape(embedded, cut) == shape(embedded, whole)
