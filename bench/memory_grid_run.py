"""A grid run with the memory stream, as a user runs it: is it bound by the model calls?

The speed target: "a 25-agent, 2-simulated-day run on the stub is bound by the model
calls (report the share of wall time spent outside them)". The shipped grid experiment
(prompts/experiments/takata_grid.yaml) gets `memory: {kind: stream, minutes_per_step: M}`, is
imported into a fresh store, and run by the real CLI process

    python main.py run EXP --llm openai:stub --agents 25 --steps S --radius R --seed 1 --json

against the loopback OpenAI-protocol stub (`--latency` s per call; its replies from
simulator/memory/testing/replies.py: a rating of 5, two questions, two insights citing records,
a day's plan and its hours, no reactions, a message, a move). S = 2 days of 24 h at M
simulated minutes a step. The embedder is the packaged all-MiniLM-L6-v2 (`minilm`, in the
process: its time counts as outside the calls) unless `--embedder` says otherwise.

From the store afterwards: the run's span (started_at to finished_at), the union of its calls'
intervals (created_at to created_at + latency, from the ledger), and so the share of the span
in which no call was in flight: the time the tool spends on its own work (prompts, store,
embeddings, retrieval) between waves of calls. Plus the calls by purpose and the memories.

    python bench/memory_grid_run.py                          # 25 agents, 60 min a step: 48 steps
    python bench/memory_grid_run.py --minutes-per-step 240 --embedder mock:384   # quick

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.memory.testing.replies import memory_stream_reply  # noqa: E402
from simulator.store.store import open_store_uri  # noqa: E402
from simulator.testing import StubLLMServer  # noqa: E402

GRID = ROOT / "prompts" / "experiments" / "takata_grid.yaml"


def experiment(tmp: Path, minutes: int, embedder: str) -> Path:
    doc = yaml.safe_load(GRID.read_text(encoding="utf-8"))
    doc["name"] = "memory stream bench"
    doc["memory"] = {"kind": "stream", "minutes_per_step": minutes, "embedder": embedder}
    path = tmp / "grid_memory_bench.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def inside_calls(calls: list[dict]) -> float:
    """Seconds in which at least one call was in flight (the union of their intervals)."""
    spans = sorted(
        (c["created_at"], c["created_at"] + timedelta(seconds=c.get("latency_s") or 0))
        for c in calls
    )
    total, start, end = 0.0, None, None
    for s, e in spans:
        if end is None or s > end:
            if end is not None:
                total += (end - start).total_seconds()
            start, end = s, e
        else:
            end = max(end, e)
    if end is not None:
        total += (end - start).total_seconds()
    return total


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--agents", type=int, default=25)
    p.add_argument("--days", type=int, default=2)
    p.add_argument("--minutes-per-step", type=int, default=60)
    p.add_argument("--radius", type=int, default=5)
    p.add_argument("--latency", type=float, default=0.05)
    p.add_argument("--embedder", default="minilm")
    args = p.parse_args()
    steps = args.days * 24 * 60 // args.minutes_per_step
    with tempfile.TemporaryDirectory(prefix="sim-memory-bench-") as folder:
        tmp = Path(folder)
        env = {**os.environ, "SIM_DB": str(tmp / "db"), "SIM_USER": "bench"}
        env.update(HF_HUB_OFFLINE="1", SIM_PROGRESS_EVERY="100000")
        path = experiment(tmp, args.minutes_per_step, args.embedder)
        imported = subprocess.run(
            [sys.executable, "main.py", "experiment", "import", str(path), "--json"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        exp = json.loads(imported.stdout)["id"]
        with StubLLMServer(models=["stub"], latency_s=args.latency) as stub:
            stub.reply_fn = memory_stream_reply(
                rating="5", message=lambda name: "Hello, I am walking east. #walk"
            )
            env["OPENAI_BASE_URL"] = stub.openai_base_url
            command = [
                sys.executable,
                "main.py",
                "run",
                exp,
                "--llm",
                "openai:stub",
                "--agents",
                str(args.agents),
                "--steps",
                str(steps),
                "--radius",
                str(args.radius),
                "--seed",
                "1",
                "--json",
            ]
            started = time.perf_counter()
            done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"the run failed ({done.returncode}): {done.stderr[-1500:]}")
        run_id = json.loads(done.stdout)["conversation_id"]
        store = open_store_uri(str(tmp / "db"))
        try:
            doc = store.conversations.get(run_id)
            calls = [c for c in store.calls.for_conversation(run_id) if c.get("latency_s")]
            memories = store.memories.count(run_id)
        finally:
            store.close()
    span = (doc["finished_at"] - doc["started_at"]).total_seconds()
    busy = inside_calls(calls)
    purposes = Counter(c["purpose"] for c in calls)
    counters = doc.get("counters", {})
    print(
        f"Grid with a memory stream via the real CLI: {args.agents} agents, {args.days} "
        f"simulated days at {args.minutes_per_step} min a step = {steps} steps, radius "
        f"{args.radius}, embedder {args.embedder}, stub latency {args.latency * 1000:.0f} ms"
    )
    print(f"  process wall {wall:.1f} s; run span {span:.1f} s; {len(calls):,} calls")
    print(f"  calls by purpose: {dict(purposes)}")
    print(
        f"  memories stored: {memories:,}; reflections {counters.get('reflections')}; "
        f"importance fallbacks {counters.get('importance_fallbacks')}"
    )
    print(
        f"  at least one call in flight for {busy:.1f} s of the {span:.1f} s span: "
        f"{(span - busy) / span:.1%} of the run's wall time is spent outside the model calls"
    )


if __name__ == "__main__":
    main()
