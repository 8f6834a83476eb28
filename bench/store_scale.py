"""The store at scale: what the CLI costs at 1k, 10k (and, opt-in, 100k) conversations.

For each size N it builds a store through the real paths (the CLI imports the prison
experiment; `llm-sim sweep create EXP FILE` plans N conversations and inserts them through
SweepsRepository.insert_conversations), then seeds 20 messages per conversation (insert_many
of documents shaped as MessagesRepository writes them) and mixed statuses (most done, some
failed, a few pending or running). Then it times the real CLI process, as a user starts it,
and reads its peak resident memory from /usr/bin/time -v:

    sweep create     llm-sim sweep create EXP sweep.yaml --yes --json
    sweep status     llm-sim sweep status SWEEP
    conversation list  llm-sim conversation list        (the default page)
    export           llm-sim export SWEEP -o DIR       (jsonl; also "export csv", "export parquet")
    measures         llm-sim measures SWEEP

and prints wall time, peak RSS and the growth between sizes (10k/1k, 100k/10k; linear is 10).
Embedded store (litemongo in a temp dir) by default; `--wire` runs the same on nx-27017 over
TCP (started on a free loopback port, as tests/conftest.py's `wire_server` does).

    python bench/store_scale.py                      # 1000,10000
    python bench/store_scale.py --sizes 1000,10000,100000 --wire
    python bench/store_scale.py --steps export,measures   # only these (the store is built anyway)
    python bench/store_scale.py --sizes 1000,10000,100000 --wire --steps 'sweep create'
    python bench/store_scale.py --keep /tmp/scale --steps export,measures   # build once, reuse

With `--keep DIR` the stores are built in DIR and reused by later runs with the same DIR (a
100,000 x 20 store takes about 15 minutes to build on the embedded store), so a change can be
timed before and after on the same data. Without it they live in a temporary folder.

Calls are not seeded (the calls table of the export stays empty); with `--steps 'sweep create'`
alone nothing is seeded. Above 10,000 the sweep has 10,000 repetitions per cell and one cell
per number of days (100,000: days 1 to 10). Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.domain.clock import now  # noqa: E402
from simulator.store.repositories.messages import SCHEMA_VERSION, message_id  # noqa: E402
from simulator.store.store import open_store_uri  # noqa: E402
from simulator.testing.wire_server import wire_server  # noqa: E402

EXPERIMENT = ROOT / "prompts" / "experiments" / "prison.yaml"
USER = "bench"
MESSAGES = 20
LLM_SIM = shutil.which("llm-sim") or "llm-sim"
TIME = "/usr/bin/time"
EXPORT_FORMATS = ("jsonl", "csv", "parquet")
STEPS = (
    "sweep create",
    "sweep status",
    "conversation list",
    "export",
    "export csv",
    "export parquet",
    "measures",
)


@dataclass
class Measure:
    wall_s: float | None  # None: ran past the time limit
    rss_mb: float | None
    code: int


def cli(args: list[str], env: dict, timeout: float) -> tuple[Measure, str]:
    """Run `llm-sim ARGS` as its own process; wall time and peak RSS (KiB from time -v)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        command = [LLM_SIM, *args]
        if os.path.exists(TIME):
            command = [TIME, "-v", "-o", report.name, *command]
        start = time.perf_counter()
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Measure(None, None, 124), ""
        wall = time.perf_counter() - start
        found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report.read())
    rss = int(found.group(1)) / 1024 if found else None
    if done.returncode != 0:
        print(f"    ! llm-sim {' '.join(args)} exited {done.returncode}: {done.stderr[-400:]}")
    return Measure(wall, rss, done.returncode), done.stdout


MAX_REPETITIONS = 10_000  # per cell (SweepSpec.repetitions)


def sweep_yaml(path: Path, n: int) -> Path:
    """One cell of n repetitions up to 10,000; beyond, n / 10,000 cells that differ in their
    number of days (`every_day_count`), as a sweep of 100,000 must have at least 10 cells."""
    cells = -(-n // MAX_REPETITIONS)
    if n % cells:
        raise SystemExit(f"--sizes: {n} is not a multiple of {cells} cells")
    days = f"days: {cells}\nevery_day_count: true\n" if cells > 1 else "days: 1\n"
    path.write_text(
        "name: scale\n"
        f"repetitions: {n // cells}\n"
        "llms: [local:smollm2]\n"
        f"total_messages: {MESSAGES}\n"
        f"{days}"
        "agents: {Guard: 1, Prisoner: 1}\n"
        "speaker_methods: [round_robin]\n"
        "seed: 7\n"
    )
    return path


WORDS = tuple(
    [
        "order",
        "cell",
        "yard",
        "rule",
        "schedule",
        "quiet",
        "request",
        "uniform",
        "keys",
        "warden",
        "privilege",
        "breakfast",
        "count",
        "lights",
        "respect",
        "complaint",
        "visit",
        "letter",
        "shower",
        "guard",
        "prisoner",
        "door",
        "bell",
        "line",
        "work",
    ]
)


def reply_text(rng: random.Random, words: int = 50) -> str:
    """A reply of random words from a small vocabulary: never a near duplicate of the one
    before, but alike in letters, so `measures`' repetition check (difflib, whose character
    quick_ratio passes 0.9 here) pays its full ratio() on every pair: its worst case."""
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def seed(uri: str, db_name: str, sweep_id: str) -> float:
    """20 messages per conversation and mixed statuses; returns seconds spent."""
    start = time.perf_counter()
    store = open_store_uri(uri, db_name)
    db = store.db
    ids = [d["_id"] for d in db.conversations.find({"sweep_id": sweep_id}, {"_id": 1})]
    rng = random.Random(7)
    created = now()
    batch: list[dict] = []
    for cid in ids:
        for i in range(MESSAGES):
            text = reply_text(rng)
            role = ("Guard", "Prisoner")[i % 2]
            batch.append(
                {
                    "_id": message_id(cid, 1, i),
                    "schema_version": SCHEMA_VERSION,
                    "conversation_id": cid,
                    "created_at": created,
                    "day": 1,
                    "index": i,
                    "seq": i,
                    "speaker": role,
                    "role": role,
                    "text": text,
                    "raw_text": text,
                    "trimmed": False,
                    "cut_at": None,
                    "empty": False,
                    "speaker_fallback": False,
                    "speaker_notes": [],
                    "model": "local:smollm2",
                    "latency_s": 0.05,
                    "tokens_in": 400 + i,
                    "tokens_out": 80,
                }
            )
        if len(batch) >= 5000:
            db.messages.insert_many(batch)
            batch = []
    if batch:
        db.messages.insert_many(batch)
    counters = {"messages": MESSAGES, "calls": MESSAGES, "tokens_out": 80 * MESSAGES}
    db.conversations.update_many(
        {"sweep_id": sweep_id},
        {"$set": {"status": "done", "counters": counters, "started_at": created}},
    )
    # a few of every other status, so that the counts have something to count
    for status, every in (("failed", 37), ("pending", 101), ("running", 211)):
        chosen = ids[1::every]
        for start_at in range(0, len(chosen), 500):
            db.conversations.update_many(
                {"_id": {"$in": chosen[start_at : start_at + 500]}},
                {"$set": {"status": status, "error": "bench" if status == "failed" else None}},
            )
    store.close()
    return time.perf_counter() - start


def one_size(
    uri: str,
    db_name: str,
    n: int,
    work: Path,
    timeout: float,
    steps: tuple[str, ...] = STEPS,
    built: Path | None = None,
) -> dict[str, Measure]:
    """Build the store of size n (sweep create and seeding always run) and time `steps`.
    `built`: a file naming the sweep of a store kept from an earlier run (--keep); when it
    exists, the store is reused as it is (no sweep create)."""
    env = {**os.environ, "SIM_DB": uri, "SIM_DB_NAME": db_name, "SIM_USER": USER}
    env.update({"HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1"})
    results: dict[str, Measure] = {}
    if built is not None and built.exists():
        sweep_id = json.loads(built.read_text())["sweep_id"]
        print(f"  N={n}: reusing the store kept with sweep {sweep_id}", flush=True)
        steps = tuple(s for s in steps if s != "sweep create")
    else:
        _, out = cli(["experiment", "import", str(EXPERIMENT), "--json"], env, timeout)
        experiment_id = json.loads(out)["id"]
        spec = sweep_yaml(work / f"sweep_{n}.yaml", n)
        results["sweep create"], out = cli(
            ["sweep", "create", experiment_id, str(spec), "--yes", "--json"], env, timeout
        )
        if not out:
            return results
        sweep_id = json.loads(out)["sweep_id"]
        if set(steps) == {"sweep create"}:  # nothing reads the messages: no seeding
            return results
        print(f"  N={n}: seeding {n * MESSAGES:,} messages …", flush=True)
        print(f"  N={n}: seeded in {seed(uri, db_name, sweep_id):.1f} s", flush=True)
        if built is not None:
            built.write_text(json.dumps({"sweep_id": sweep_id}))
    if "sweep status" in steps:
        results["sweep status"], _ = cli(["sweep", "status", sweep_id], env, timeout)
    if "conversation list" in steps:
        results["conversation list"], out = cli(["conversation", "list"], env, timeout)
        lines = [line for line in out.splitlines() if line.strip()]
        print(f"  N={n}: conversation list printed {len(lines)} lines; last: {lines[-1:]}")
    for fmt_name in EXPORT_FORMATS:
        step = "export" if fmt_name == "jsonl" else f"export {fmt_name}"
        if step in steps:
            folder = str(work / f"export_{n}_{fmt_name}")
            args = ["export", sweep_id, "--format", fmt_name, "-o", folder]
            results[step], _ = cli(args, env, timeout)
    if "measures" in steps:
        results["measures"], _ = cli(["measures", sweep_id], env, timeout)
    if "sweep create" not in steps:
        results.pop("sweep create", None)
    return results


def fmt(value: float | None, unit: str) -> str:
    return "timeout" if value is None else f"{value:.2f} {unit}"


def report(label: str, sizes: list[int], runs: dict[int, dict[str, Measure]]) -> None:
    print(f"\n{label}")
    head = "".join(f"{f'N={n:,}':>22s}" for n in sizes)
    growth = "".join(f"{f'{b // a}x/{a:,}':>14s}" for a, b in itertools.pairwise(sizes))
    print(f"  {'step':20s}{head}  growth{growth}")
    for step in [s for s in STEPS if any(s in runs.get(n, {}) for n in sizes)]:
        cells, walls = [], []
        for n in sizes:
            m = runs.get(n, {}).get(step)
            walls.append(m.wall_s if m else None)
            text = "-" if m is None else f"{fmt(m.wall_s, 's')} {fmt(m.rss_mb, 'MB')}"
            cells.append(f"{text:>22s}")
        ratios = "".join(
            f"{(b / a if a and b else float('nan')):>14.1f}" for a, b in itertools.pairwise(walls)
        )
        print(f"  {step:20s}{''.join(cells)}        {ratios}")
    print("  (cells: wall time, peak RSS of the CLI process; growth: wall-time ratio, linear = 10)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="1000,10000", help="conversation counts, e.g. 1000,10000"
    )
    parser.add_argument("--wire", action="store_true", help="also on nx-27017 over TCP")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per CLI command")
    parser.add_argument(
        "--steps",
        default=",".join(STEPS),
        help="steps to time, comma-separated (the store is built whatever they are); "
        "'export' is jsonl, 'export csv' and 'export parquet' the others; "
        "e.g. --steps export,measures",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        metavar="DIR",
        help="build the stores in DIR and keep them; a later run with the same DIR reuses them",
    )
    parser.add_argument("--wire-only", action="store_true", help="only on nx-27017 over TCP")
    args = parser.parse_args(argv)
    steps = tuple(s.strip() for s in args.steps.split(",") if s.strip())
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        parser.error(f"unknown step {unknown[0]!r}; choose from: {', '.join(STEPS)}")
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            work = args.keep.absolute()
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="store_scale_")))
        kept = args.keep is not None
        if not args.wire_only:
            runs: dict[int, dict[str, Any]] = {}
            for n in sizes:
                folder = work / f"embedded_{n}"
                built = folder / "built.json" if kept else None
                folder.mkdir(exist_ok=True)
                runs[n] = one_size(str(folder / "db"), "scale", n, work, args.timeout, steps, built)
            report("embedded store (litemongo)", sizes, runs)
        if args.wire or args.wire_only:
            wire_runs: dict[int, dict[str, Any]] = {}
            with wire_server(work) as uri:
                for n in sizes:
                    built = work / f"wire_{n}.json" if kept else None
                    wire_runs[n] = one_size(uri, f"scale_{n}", n, work, args.timeout, steps, built)
            report("nx-27017 over TCP", sizes, wire_runs)


if __name__ == "__main__":
    main()
