"""What keeping spend costs a sweep, and what a cap costs on top.

The same sweep (`--conversations` x `--messages`, prison experiment, one Guard and one
Prisoner, one day, on the embedded store in a temp dir) runs against the loopback stub in its
own process, three ways, interleaved round by round (order rotating):

* `off`: spend tracking patched out (no price per call, no sweep counters): the baseline;
* `kept`: as shipped, no cap: each call's cost in the ledger, the run's `spend`, the worker's
  share of the sweep's counters written at most once a second;
* `capped`: with a cap far above what the sweep spends (`--max-calls`): the sweep's spend is read
  from the store before every call and every claim (and this worker's share flushed first).

It prints the median CPU seconds of this process and wall time per variant, and each one's
ratio to `off`. Absolute figures move with the machine's load; read the ratios.

    python bench/spend_overhead.py
    python bench/spend_overhead.py --conversations 32 --messages 20 --rounds 5

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sweep_overhead import make_sweep, stub_server  # noqa: E402

from simulator.domain.budget import Caps  # noqa: E402
from simulator.engine import recorder as recorder_module  # noqa: E402
from simulator.engine.budget import using  # noqa: E402
from simulator.llm.access import LLMAccess  # noqa: E402
from simulator.llm.retry import PoolRegistry, RetryPolicy  # noqa: E402
from simulator.services import spend as spend_service  # noqa: E402
from simulator.services import sweep_runs  # noqa: E402
from simulator.store.store import open_store_uri  # noqa: E402

VARIANTS = ("off", "kept", "capped")


@contextlib.contextmanager
def tracking_off() -> Iterator[None]:
    """Spend tracking patched out: no price looked up per call, no sweep counters written."""
    saved = recorder_module.price_of, sweep_runs.metered, sweep_runs.SweepRunner.run
    recorder_module.price_of = lambda choice: None
    sweep_runs.metered = lambda meter, on_call: on_call
    sweep_runs.SweepRunner.run = sweep_runs.EngineSweepRunner.run  # no final flush
    try:
        yield
    finally:
        recorder_module.price_of, sweep_runs.metered, sweep_runs.SweepRunner.run = saved


async def run_once(db: str, variant: str, args: argparse.Namespace) -> tuple[float, float]:
    """One sweep in a fresh store: (wall seconds, CPU seconds of this process)."""
    store = open_store_uri(db)
    try:
        sweep_id = make_sweep(store, args.conversations, args.messages, seed=1)
        llms = LLMAccess(
            pools=PoolRegistry(sizes={"openai": args.concurrency}),
            policy=RetryPolicy.no_wait(max_attempts=1),
        )
        meter = spend_service.SweepMeter(store, sweep_id)
        caps = Caps(max_calls=10**9) if variant == "capped" else None
        budget = spend_service.sweep_budget(meter, caps)
        runner = sweep_runs.SweepRunner(
            store,
            sweep_id,
            llms,
            meter=meter,
            concurrency=args.concurrency,
            wait_for_others=False,
            budget=budget,
        )
        start, cpu = time.perf_counter(), time.process_time()
        try:
            with using(budget):
                progress = await runner.run()
        finally:
            await llms.aclose()
        wall, used = time.perf_counter() - start, time.process_time() - cpu
        if progress.done != progress.total:
            raise RuntimeError(f"{variant}: {progress.done}/{progress.total} done")
        return wall, used
    finally:
        store.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--messages", type=int, default=12)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.02, help="stub seconds per call")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    figures: dict[str, list[tuple[float, float]]] = {v: [] for v in VARIANTS}
    calls = args.conversations * (args.messages + 1)
    with stub_server(args.latency, in_process=False) as base_url:
        os.environ["OPENAI_BASE_URL"] = base_url
        os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
        for number in range(args.rounds):
            order = VARIANTS[number % 3 :] + VARIANTS[: number % 3]
            for variant in order:
                with tempfile.TemporaryDirectory() as tmp:
                    db = str(Path(tmp) / "store")
                    patch = tracking_off() if variant == "off" else contextlib.nullcontext()
                    with patch:
                        figures[variant].append(asyncio.run(run_once(db, variant, args)))
                print(f"round {number + 1} {variant}: {figures[variant][-1][0]:.2f} s", flush=True)
    base_wall = statistics.median(w for w, _ in figures["off"])
    base_cpu = statistics.median(c for _, c in figures["off"])
    print(
        f"\n{args.conversations} conversations x {args.messages} messages ({calls} calls), "
        f"concurrency {args.concurrency}, stub latency {args.latency} s, {args.rounds} rounds"
    )
    heads = ("wall s", "x off", "CPU s", "x off", "CPU ms/call")
    print(f"{'variant':<8} {heads[0]:>8} {heads[1]:>7} {heads[2]:>8} {heads[3]:>7} {heads[4]:>12}")
    for variant in VARIANTS:
        wall = statistics.median(w for w, _ in figures[variant])
        cpu = statistics.median(c for _, c in figures[variant])
        print(
            f"{variant:<8} {wall:>8.2f} {wall / base_wall:>7.2f} {cpu:>8.2f} "
            f"{cpu / base_cpu:>7.2f} {cpu / calls * 1000:>12.2f}"
        )


if __name__ == "__main__":
    main()
