"""`llm-sim sweep create` of one large sweep on the embedded store: seconds, conversations/s
and peak RSS of the real CLI process (/usr/bin/time -v), at 100,000 and 1,000,000.

Each size is one sweep (the prison experiment, one LLM, 10,000 repetitions per cell and one cell
per number of days: 1,000,000 is 100 cells) created into a fresh store. `--into DIR` creates it
into an existing store instead (DIR keeps the sweep; each run uses another seed, so its
conversations are new). `--baseline CHECKOUT` times another version of this tool too, in
interleaved rounds on fresh stores, and prints the ratio (a checkout whose sweeps stop below a
size is skipped at that size). The machine's load shows in every figure: compare within a run.

    python -m compileall -q simulator
    env -u PYTHONDONTWRITEBYTECODE python bench/sweep_create.py                 # 100k and 1M
    env -u PYTHONDONTWRITEBYTECODE python bench/sweep_create.py --sizes 100000 \\
        --baseline /path/to/older/checkout --rounds 2
    env -u PYTHONDONTWRITEBYTECODE python bench/sweep_create.py --sizes 1000000 \\
        --into /tmp/st/scale/embedded_1000000

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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "prompts" / "experiments" / "prison.yaml"
TIME = "/usr/bin/time"
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


def cli(checkout: Path, args: list[str], env: dict) -> tuple[float, float | None, str]:
    """Run the checkout's main.py: wall seconds, peak RSS in MB, stdout."""
    env = {**env, "PYTHONPATH": str(checkout)}
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        command = [sys.executable, str(checkout / "main.py"), *args]
        if os.path.exists(TIME):
            command = [TIME, "-v", "-o", report.name, *command]
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report.read())
    if done.returncode != 0:
        raise SystemExit(f"llm-sim {' '.join(args)} exited {done.returncode}: {done.stderr[-800:]}")
    return wall, (int(found.group(1)) / 1024 if found else None), done.stdout


def create(checkout: Path, store: Path, n: int, seed: int, work: Path) -> tuple[float, float]:
    """Import the experiment (once per store) and time `sweep create` of n conversations."""
    env = {**os.environ, "SIM_DB": str(store), "SIM_DB_NAME": "llm_simulator"}
    env.update({"SIM_USER": "bench", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    _, _, out = cli(checkout, ["experiment", "import", str(EXPERIMENT), "--json"], env)
    spec = sweep_yaml(work / f"sweep_{n}_{seed}.yaml", n, seed)
    wall, rss, out = cli(
        checkout, ["sweep", "create", json.loads(out)["id"], str(spec), "--yes", "--json"], env
    )
    added = json.loads(out).get("added", n)
    if added != n:
        print(f"    ! {added:,} of {n:,} added (some were stored already)")
    return wall, rss or 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another checkout, timed alternately")
    parser.add_argument("--into", type=Path, help="an existing store to add each sweep to")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    checkouts = {"this": ROOT}
    if args.baseline:
        checkouts["baseline"] = args.baseline.resolve()
    rows = []
    with tempfile.TemporaryDirectory(prefix="sweep_create_") as folder:
        work = Path(folder)
        for n in sizes:
            for round_ in range(args.rounds):
                for name, checkout in checkouts.items():
                    if not _holds(checkout, n):
                        continue
                    target = args.into or work / f"store_{name}_{n}_{round_}"
                    seed = random.randrange(10**9)
                    wall, rss = create(checkout, target, n, seed, work)
                    where = "into " + str(args.into) if args.into else "empty store"
                    rows.append((n, name, where, wall, rss))
                    print(
                        f"  {name:8} N={n:>9,} {where}: {wall:7.1f} s  {n / wall:9,.0f}/s  "
                        f"{rss:6.0f} MB",
                        flush=True,
                    )
                    if not args.into:
                        subprocess.run(["rm", "-rf", str(target)], check=False)
    _table(rows, list(checkouts))


def _holds(checkout: Path, n: int) -> bool:
    limits = (checkout / "simulator" / "domain" / "limits.py").read_text()
    found = re.search(r"MAX_SWEEP_CONVERSATIONS = ([\d_]+)", limits)
    return found is not None and int(found.group(1).replace("_", "")) >= n


def _table(rows: list[tuple], names: list[str]) -> None:
    print(f"\n{'N':>9}  {'version':8}  {'where':28}  {'median s':>8}  {'conv/s':>9}  {'RSS MB':>6}")
    best: dict[tuple, float] = {}
    for n in dict.fromkeys(r[0] for r in rows):
        for name in names:
            mine = sorted(r[3] for r in rows if r[0] == n and r[1] == name)
            if not mine:
                continue
            median = mine[len(mine) // 2]
            rss = max(r[4] for r in rows if r[0] == n and r[1] == name)
            where = next(r[2] for r in rows if r[0] == n and r[1] == name)
            best[(n, name)] = median
            print(f"{n:>9,}  {name:8}  {where:28}  {median:8.1f}  {n / median:9,.0f}  {rss:6.0f}")
        if (n, "baseline") in best:
            print(f"{'':>9}  ratio baseline/this: {best[(n, 'baseline')] / best[(n, 'this')]:.2f}")


if __name__ == "__main__":
    main()
