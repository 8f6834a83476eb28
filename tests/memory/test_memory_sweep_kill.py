"""A grid sweep with memory streams, killed with SIGKILL mid-run, resumes with nothing stored
re-rated or re-embedded: every call answered once, every stream whole, and no text of a record
stored before the kill sent to the embeddings endpoint again (the stub's /v1/embeddings)."""

from __future__ import annotations

import itertools
import json
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML, cli
from process_waits import cli_here

from simulator.services import experiments as exp_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.grid.domain.sweep import GridSweepSpec
from simulator.worlds.grid.services import sweeps as grid_sweeps

AGENTS, STEPS = 4, 3


def unique_replies():
    """Replies whose texts never repeat (a counter), so an embedded text names one record."""
    counter = itertools.count()
    lock = threading.Lock()

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        with lock:
            n = next(counter)
        if prompt.endswith("Rating:"):
            return "7"
        if "salient high-level questions" in prompt:
            return f"1. Who spoke {n}?\n2. What happened {n}?"
        if "high-level insights" in prompt:
            return f"insight {n} (because of 0, 1)\nanother insight {n} (because of 2)"
        if "Choose your next move" in prompt:
            return "y+1"
        return f"hello number {n}"

    return reply


def _embedded(stub, since: int = 0) -> list[str]:
    texts: list[str] = []
    for request in stub.requests[since:]:
        if request.path == "/v1/embeddings":
            body = request.body["input"]
            texts.extend([body] if isinstance(body, str) else body)
    return texts


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_rates_and_embeds_nothing_stored(tmp_path):
    db = str(tmp_path / "store")
    with StubLLMServer(models=["stub", "emb"], latency_s=0.03) as stub:
        stub.reply_fn = unique_replies()
        doc = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
        doc["memory"] = {
            "kind": "stream",
            "embedder": f"openai:emb@{stub.openai_base_url}",
            "reflection_threshold": 20,
        }
        path = tmp_path / "grid.yaml"
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        store = open_store(open_database(db, "llm_simulator"))
        try:
            view = exp_service.import_yaml(store, path, "alice")
            spec = GridSweepSpec(
                llms=["openai:stub"], agents=[AGENTS], steps=[STEPS], radius=[25], seeds=[1, 2]
            )
            sweep, added = grid_sweeps.create(store, view, spec, "alice")
            assert added == 2
        finally:
            store.close()
        proc = cli(db, stub, "sweep", "run", sweep["_id"], "--concurrency", "2")
        deadline = time.monotonic() + 120
        while len(stub.chat_requests) < 140 and time.monotonic() < deadline:
            time.sleep(0.01)  # wait for calls to have happened, not for a time
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)

        store = open_store(open_database(db, "llm_simulator"))
        try:
            runs = store.sweeps.conversations(sweep["_id"])
            stored_before = {
                r.text
                for run in runs
                for i in range(AGENTS)
                for r in store.memories.stream(run["_id"], i)
            }
        finally:
            store.close()
        assert stored_before  # the kill came after records were stored
        requests_before = len(stub.requests)
        resumed = cli_here(db, stub, "sweep", "resume", sweep["_id"], "--json")
        out, err = resumed.stdout, resumed.stderr
        assert resumed.returncode == 0, err
        assert json.loads(out)["complete"]
        embedded_after = _embedded(stub, requests_before)

    assert not stored_before & set(embedded_after)  # nothing stored was embedded again
    store = open_store(open_database(db, "llm_simulator"))
    try:
        for run in store.sweeps.conversations(sweep["_id"]):
            assert run["status"] == "done"
            calls = [c for c in store.calls.for_conversation(run["_id"]) if c["state"] == "done"]
            answered = Counter((c["purpose"], c["day"], c["index"], c["agent"]) for c in calls)
            assert set(answered.values()) == {1}  # nothing answered twice, ratings included
            ratings = sum(c["purpose"] == "memory_importance" for c in calls)
            streams = [store.memories.stream(run["_id"], i) for i in range(AGENTS)]
            assert ratings == sum(len(s) for s in streams)  # one rating per record, no more
            for stream in streams:
                assert [r.seq for r in stream] == list(range(len(stream)))
                heard = [r for r in stream if r.type == "observation"]  # said and heard
                assert len(heard) == STEPS * AGENTS  # its own message and three heard, a step
                assert len({r.text for r in stream}) == len(stream)  # no record made twice
            rows = store.grid_steps.for_run(run["_id"])
            assert len(rows) == AGENTS * STEPS and all(r["retrieved"] for r in rows)
    finally:
        store.close()
