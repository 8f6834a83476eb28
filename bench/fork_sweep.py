"""Forking a long conversation, as a user runs it: does a branch cost more than a conversation?

A fork stores only its own messages and reads the shared prefix from its parent (store/
lineage.py) when it starts and whenever it resumes. This bench measures that path through the
real CLI process against the loopback OpenAI-protocol stub (`--latency` s per call):

1. a parent chat of DAYS days x TURNS turns (`llm-sim run … --days DAYS --messages DAYS*TURNS`);
2. a fork sweep of N branches at the start of its last day (`sweep create --fork-from PARENT
   --fork-at DAYS:0 --repetitions N`, then `sweep run --concurrency C`): each branch shares
   (DAYS-1) x TURNS messages and DAYS-1 summaries, and runs TURNS turns and one summary;
3. the baseline, in the same run: a plain sweep of N one-day conversations of TURNS turns
   (the same calls per conversation: TURNS turns and one summary).

It prints the wall time of each `sweep run`, per conversation, and the ratio, and, inside
one process, the time to read one branch's prefix (the lineage read every start and resume
does) against the time to read the parent's own messages.

    python bench/fork_sweep.py                       # 50 days x 20 turns, 100 branches
    python bench/fork_sweep.py --days 10 --branches 20   # quick

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
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.store import lineage  # noqa: E402
from simulator.store.store import open_store_uri  # noqa: E402
from simulator.testing import StubLLMServer  # noqa: E402

PRISON = ROOT / "prompts" / "experiments" / "prison.yaml"


def cli(env: dict, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "main.py", *args], env=env, cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed ({done.returncode}): {done.stderr[-1500:]}")
    return json.loads(done.stdout) if "--json" in args else {}


def timed_sweep_run(env: dict, sweep_id: str, concurrency: int) -> float:
    started = time.perf_counter()
    cli(env, "sweep", "run", sweep_id, "--concurrency", str(concurrency))
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--days", type=int, default=50)
    p.add_argument("--turns", type=int, default=20, help="agent turns per day")
    p.add_argument("--branches", type=int, default=100)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--latency", type=float, default=0.0)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="sim-fork-bench-") as folder:
        env = {**os.environ, "SIM_DB": str(Path(folder) / "db"), "SIM_USER": "bench"}
        env.update(HF_HUB_OFFLINE="1", SIM_PROGRESS_EVERY="100000", OPENAI_API_KEY="sk-bench")
        exp = cli(env, "experiment", "import", str(PRISON), "--json")["id"]
        with StubLLMServer(models=["stub"], latency_s=args.latency) as stub:
            env["OPENAI_BASE_URL"] = stub.openai_base_url
            agents = ("--agents", "guard=1,prisoner=1")
            started = time.perf_counter()
            parent = cli(env, "run", exp, *agents, "--messages", str(args.days * args.turns),
                         "--days", str(args.days), "--llm", "openai:stub", "--seed", "1",
                         "--json")["conversation_id"]  # fmt: skip
            parent_s = time.perf_counter() - started
            fork = cli(env, "sweep", "create", exp, "--fork-from", parent, "--fork-at",
                       f"{args.days}:0", "--repetitions", str(args.branches), "--yes",
                       "--json")["sweep_id"]  # fmt: skip
            plain = cli(env, "sweep", "create", exp, *agents, "--messages", str(args.turns),
                        "--llm", "openai:stub", "--repetitions", str(args.branches),
                        "--seed", "1", "--yes", "--json")["sweep_id"]  # fmt: skip
            fork_s = timed_sweep_run(env, fork, args.concurrency)
            plain_s = timed_sweep_run(env, plain, args.concurrency)
            calls = len(stub.chat_requests)
        store = open_store_uri(env["SIM_DB"])
        try:
            branches = store.sweeps.conversations(fork)
            done = sum(b["status"] == "done" for b in branches)
            shared = len(lineage.prefix(store, branches[0]).messages)
            prefix_s, own_s = [], []
            for doc in branches[:20]:
                started = time.perf_counter()
                lineage.prefix(store, doc)
                prefix_s.append(time.perf_counter() - started)
                started = time.perf_counter()
                store.messages.for_conversation(parent)
                own_s.append(time.perf_counter() - started)
        finally:
            store.close()
    n = args.branches
    print(f"parent: {args.days} days x {args.turns} turns, run in {parent_s:.1f} s")
    print(f"{calls:,} calls to the stub in all; {done}/{n} branches done, each sharing "
          f"{shared:,} messages")  # fmt: skip
    print(f"fork sweep:  {n} branches in {fork_s:.2f} s ({fork_s / n * 1000:.0f} ms each)")
    print(f"plain sweep: {n} conversations in {plain_s:.2f} s ({plain_s / n * 1000:.0f} ms each)")
    print(f"ratio fork / plain: {fork_s / plain_s:.2f}")
    print(f"reading one branch's prefix: median {median(prefix_s) * 1000:.1f} ms "
          f"(the parent's own messages: {median(own_s) * 1000:.1f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
