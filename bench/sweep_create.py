"""`llm-sim sweep create` of one large sweep on the embedded store: seconds, conversations/s,
CPU seconds, bytes written, peak RSS and the store's breakdown, at 100,000 and 1,000,000.

Each size is one sweep (the prison experiment, one LLM, 10,000 repetitions per cell and one cell
per number of days: 1,000,000 is 100 cells) created into a fresh store. `--into DIR` creates it
into an existing store instead (DIR keeps the sweep; each run uses another seed, so its
conversations are new). `--baseline CHECKOUT` (or `--compare`) times another version of this
tool too, in interleaved rounds on fresh stores, and prints the ratios (a checkout whose sweeps
stop below a size is skipped at that size). The machine's load shows in every figure: compare
within a run; CPU seconds move less with the load than wall seconds.

Each CLI process runs under a small runner that reports its bytes written (/proc/self/io
`write_bytes`: what reached the disk or its page cache, temporary files included), its peak RSS
and CPU time, and the embedded store's log line of the bulk write: seconds staging the
documents, then seconds holding the write lock (copying the documents, their rows, the commit
with its checkpoint).

    python -m compileall -q simulator
    env -u PYTHONDONTWRITEBYTECODE python bench/sweep_create.py                 # 100k and 1M
    env -u PYTHONDONTWRITEBYTECODE python bench/sweep_create.py --sizes 100000,1000000 \\
        --baseline /path/to/main/checkout
    env -u PYTHONDONTWRITEBYTECODE python bench/sweep_create.py --sizes 1000000 \\
        --into /path/to/a/copy/of/a/1M/store/db --db-name scale

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "prompts" / "experiments" / "prison.yaml"
REPETITIONS = 10_000  # per cell at most (SweepSpec.repetitions)


def sweep_yaml(path: Path, n: int, seed: int) -> Path:
    """n conversations: n / 10,000 cells differing in their number of days."""
    cells = -(-n // REPETITIONS)
    if n % cells:
        raise SystemExit(f"--sizes: {n} is not a multiple of {cells} cells")
    days = f"days: {cells}\nevery_day_count: true\n" if cells > 1 else "days: 1\n"
    path.write_text(
        f"name: create {n}\nrepetitions: {n // cells}\nllms: [local:smollm2]\n"
        f"total_messages: {max(20, 2 * cells)}\n{days}"
        "agents: {Guard: 1, Prisoner: 1}\nspeaker_methods: [round_robin]\n"
        f"seed: {seed}\n"
    )
    return path


# Runs main.py in the measured process, then writes what it cost: bytes written (/proc/self/io),
# peak RSS, CPU seconds and the embedded store's breakdown of its bulk write (its log line).
RUNNER = """
import json, logging, os, resource, runpy, sys
out, sys.argv = sys.argv[1], ["main.py", *sys.argv[2:]]
lines = []
class Keep(logging.Handler):
    def emit(self, record):
        lines.append(record.getMessage())
bulk = logging.getLogger("simulator.store.bulk_embedded")
bulk.addHandler(Keep())
bulk.setLevel(logging.INFO)
def io():
    try:
        with open("/proc/self/io") as f:
            return {k: int(v) for k, v in (line.split(": ") for line in f.read().splitlines())}
    except OSError:
        return {}
before = io()
try:
    runpy.run_path("main.py", run_name="__main__")
finally:
    after, use = io(), resource.getrusage(resource.RUSAGE_SELF)
    with open(out, "w") as f:
        json.dump({"written": after.get("write_bytes", 0) - before.get("write_bytes", 0),
                   "rss_mb": use.ru_maxrss / 1024, "cpu_s": use.ru_utime + use.ru_stime,
                   "log": lines}, f)
"""
BREAKDOWN = re.compile(
    r"staged in ([\d.]+) s, then the write lock held ([\d.]+) s \(documents ([\d.]+) s, "
    r"rows ([\d.]+) s, commit ([\d.]+) s\)"
)


@dataclass
class Run:
    wall: float
    rss: float
    cpu: float
    written: int
    phases: tuple[float, ...] | None  # staged, lock held, documents, rows, commit
    stdout: str


def cli(checkout: Path, args: list[str], env: dict) -> Run:
    """Run the checkout's main.py (from the checkout): wall seconds and what RUNNER measured."""
    env = {**env, "PYTHONPATH": str(checkout)}
    with tempfile.NamedTemporaryFile("r", suffix=".json") as report:
        command = [sys.executable, "-c", RUNNER, report.name, *args]
        start = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=checkout, capture_output=True, text=True)
        wall = time.perf_counter() - start
        measured = json.loads(report.read() or "{}")
    if done.returncode != 0:
        raise SystemExit(f"llm-sim {' '.join(args)} exited {done.returncode}: {done.stderr[-800:]}")
    found = next(filter(None, map(BREAKDOWN.search, measured.get("log", []))), None)
    phases = tuple(float(x) for x in found.groups()) if found else None
    return Run(
        wall,
        measured.get("rss_mb", 0.0),
        measured.get("cpu_s", 0.0),
        measured.get("written", 0),
        phases,
        done.stdout,
    )


def create(
    checkout: Path, store: Path, n: int, seed: int, work: Path, db_name: str = "llm_simulator"
) -> Run:
    """Import the experiment (once per store) and time `sweep create` of n conversations."""
    env = {**os.environ, "SIM_DB": str(store), "SIM_DB_NAME": db_name}
    env.update({"SIM_USER": "bench", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    imported = cli(checkout, ["experiment", "import", str(EXPERIMENT), "--json"], env)
    spec = sweep_yaml(work / f"sweep_{n}_{seed}.yaml", n, seed)
    experiment = json.loads(imported.stdout)["id"]
    run = cli(checkout, ["sweep", "create", experiment, str(spec), "--yes", "--json"], env)
    added = json.loads(run.stdout).get("added", n)
    if added != n:
        print(f"    ! {added:,} of {n:,} added (some were stored already)")
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--baseline", "--compare", type=Path, help="another checkout, timed alternately"
    )
    parser.add_argument("--into", type=Path, help="an existing store to add each sweep to")
    parser.add_argument("--db-name", default="llm_simulator", help="the database in --into")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    checkouts = {"this": ROOT}
    if args.baseline:
        checkouts["baseline"] = args.baseline.resolve()
    rows: list[tuple[int, str, str, Run]] = []
    with tempfile.TemporaryDirectory(prefix="sweep_create_") as folder:
        work = Path(folder)
        for n in sizes:
            for round_ in range(args.rounds):
                order = list(checkouts.items())
                for name, checkout in order if round_ % 2 == 0 else order[::-1]:
                    if not _holds(checkout, n):
                        continue
                    target = args.into or work / f"store_{name}_{n}_{round_}"
                    seed = random.randrange(10**9)
                    run = create(checkout, target, n, seed, work, args.db_name)
                    where = "into " + str(args.into) if args.into else "empty store"
                    rows.append((n, name, where, run))
                    print(
                        f"  {name:8} N={n:>9,} {where}: {run.wall:7.1f} s  {n / run.wall:9,.0f}/s"
                        f"  CPU {run.cpu:6.1f} s  written {run.written / 1e6:7,.0f} MB"
                        f"  RSS {run.rss:5.0f} MB  {_phases(run)}",
                        flush=True,
                    )
                    if not args.into:
                        subprocess.run(["rm", "-rf", str(target)], check=False)
    _table(rows, list(checkouts))


def _phases(run: Run) -> str:
    if run.phases is None:
        return ""
    staged, held, documents, rows, commit = run.phases
    return (
        f"staged {staged:.1f} s, write lock {held:.1f} s "
        f"(documents {documents:.1f}, rows {rows:.1f}, commit {commit:.1f})"
    )


def _holds(checkout: Path, n: int) -> bool:
    limits = (checkout / "simulator" / "domain" / "limits.py").read_text()
    found = re.search(r"MAX_SWEEP_CONVERSATIONS = ([\d_]+)", limits)
    return found is not None and int(found.group(1).replace("_", "")) >= n


def _table(rows: list[tuple[int, str, str, Run]], names: list[str]) -> None:
    print(
        f"\n{'N':>9}  {'version':8}  {'where':14}  {'median s':>8}  {'conv/s':>8}  {'CPU s':>6}"
        f"  {'written MB':>10}  {'KB/conv':>7}  {'RSS MB':>6}  breakdown of the median run"
    )
    best: dict[tuple, Run] = {}
    for n in dict.fromkeys(r[0] for r in rows):
        for name in names:
            mine = sorted((r[3] for r in rows if r[0] == n and r[1] == name), key=_wall)
            if not mine:
                continue
            median = best[(n, name)] = mine[len(mine) // 2]
            rss = max(r.rss for r in mine)
            where = next(r[2] for r in rows if r[0] == n and r[1] == name)[:14]
            print(
                f"{n:>9,}  {name:8}  {where:14}  {median.wall:8.1f}  {n / median.wall:8,.0f}"
                f"  {median.cpu:6.1f}  {median.written / 1e6:10,.0f}"
                f"  {median.written / n / 1e3:7.1f}  {rss:6.0f}  {_phases(median)}"
            )
        if (n, "baseline") in best:
            old, new = best[(n, "baseline")], best[(n, "this")]
            print(
                f"{'':>9}  ratio baseline/this: {old.wall / new.wall:.2f} (wall), "
                f"{old.cpu / new.cpu:.2f} (CPU), {old.written / max(new.written, 1):.2f} (written)"
            )


def _wall(run: Run) -> float:
    return run.wall


if __name__ == "__main__":
    main()
