"""Peak memory of `llm-sim export` and `llm-sim measures` as a scope grows: does it grow with N?

For each size N it runs, each as its own process as a user starts it, with its peak resident
memory read from /usr/bin/time -v (stdout goes to a file, not into this process):

    export jsonl      llm-sim export SWEEP -o DIR
    export csv        llm-sim export SWEEP --format csv -o DIR
    export parquet    llm-sim export SWEEP --format parquet -o DIR
    measures          llm-sim measures SWEEP
    measures --json   llm-sim measures SWEEP --json

on a chat sweep of N finished conversations of 20 messages, built as bench/store_scale.py
builds it (the real CLI creates the sweep, messages are seeded as the store writes them), and
prints peak RSS per step and size and its growth between sizes (flat is 1.0, linear is
N2/N1). With `--worlds grid,network` it also exports an experiment of N grid runs (10 agents, 3
steps) or N network runs (100 agents, 2 rounds): one real run with a mock model, its document
and rows copied N times. Stores are kept in DIR and reused by later runs with the same DIR
(store_scale.py's layout: a store it kept serves here too); a 100,000 x 20 chat store takes
about 15 minutes to build.

    python bench/export_memory.py --keep /tmp/scale                    # 10000,100000: chat
    python bench/export_memory.py --keep /tmp/scale --sizes 1000,10000 --worlds chat,grid,network
    python bench/export_memory.py --keep /tmp/scale --steps 'export parquet,measures'

Not a test: it prints figures. The figures are memory, not time, so a busy machine changes
them little; wall times are printed beside them for orientation only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from store_scale import LLM_SIM, TIME, USER, one_size  # noqa: E402

from simulator.store.store import open_store_uri  # noqa: E402

STEPS = ("export jsonl", "export csv", "export parquet", "measures", "measures --json")
WORLDS = {  # world -> (experiment file, run options of its one real run, rows collection)
    "grid": ("takata_grid.yaml", ("--steps", "3"), "grid_steps"),
    "network": ("llm_sam_network.yaml", ("--rounds", "2"), "network_rounds"),
}
WORLD_STEPS = ("export jsonl", "export csv", "export parquet")
KNOWN = ("chat", *WORLDS)


def environment(uri: str, db_name: str) -> dict:
    env = {**os.environ, "SIM_DB": uri, "SIM_DB_NAME": db_name, "SIM_USER": USER}
    env.update({"HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1"})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def peak(args: list[str], env: dict, out: Path, timeout: float) -> tuple[float, float | None]:
    """Run `llm-sim ARGS` with stdout to `out`; (wall seconds, peak RSS in MB)."""
    report = out.with_suffix(".time")
    start = time.perf_counter()
    with out.open("w") as stdout:
        done = subprocess.run(
            [TIME, "-v", "-o", str(report), LLM_SIM, *args],
            env=env,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout,
        )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        print(f"    ! llm-sim {' '.join(args)} exited {done.returncode}: {done.stderr[-400:]}")
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report.read_text())
    return wall, (int(found.group(1)) / 1024 if found else None)


def step_args(step: str, target: str, folder: Path) -> list[str]:
    if step.startswith("export"):
        fmt = step.split()[1]
        return ["export", target, "--format", fmt, "-o", str(folder / f"out_{fmt}")]
    return ["measures", target, *step.split()[1:]]


def chat_store(work: Path, n: int, timeout: float) -> tuple[dict, str]:
    """The chat sweep of n conversations (store_scale.py's, built once and kept)."""
    folder = work / f"embedded_{n}"
    folder.mkdir(exist_ok=True)
    built = folder / "built.json"
    if not built.exists():
        one_size(str(folder / "db"), "scale", n, work, timeout, (), built)
    return environment(str(folder / "db"), "scale"), json.loads(built.read_text())["sweep_id"]


def world_store(work: Path, world: str, n: int, timeout: float) -> tuple[dict, str]:
    """An experiment of n runs of `world`: one real run (mock model), copied n - 1 times."""
    folder = work / f"{world}_{n}"
    folder.mkdir(exist_ok=True)
    built = folder / "built.json"
    env = environment(str(folder / "db"), "scale")
    if not built.exists():
        path, options, rows_of = WORLDS[world]
        experiment = ROOT / "prompts" / "experiments" / path
        exp_id = _cli_json(["experiment", "import", str(experiment), "--json"], env)["id"]
        run = ["run", exp_id, *options, "--llm", "mock:bench", "--json"]
        run_id = _cli_json(run, env)["conversation_id"]
        store = open_store_uri(str(folder / "db"), "scale")
        doc = store.db.conversations.find_one({"_id": run_id})
        rows = list(store.db[rows_of].find({"conversation_id": run_id}))
        for start in range(1, n, 1000):
            docs, copies = [], []
            for i in range(start, min(start + 1000, n)):
                cid = f"{run_id}{i:06d}"
                docs.append({**doc, "_id": cid, "key": cid})
                copies += [
                    {**r, "_id": r["_id"].replace(run_id, cid, 1), "conversation_id": cid}
                    for r in rows
                ]
            store.db.conversations.insert_many(docs)
            store.db[rows_of].insert_many(copies)
        store.close()
        built.write_text(json.dumps({"experiment_id": exp_id}))
    return env, json.loads(built.read_text())["experiment_id"]


def _cli_json(args: list[str], env: dict) -> dict:
    done = subprocess.run([LLM_SIM, *args], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def measure(label: str, sizes: list[int], steps: tuple[str, ...], store_of, timeout: float):
    """Peak RSS of every step at every size, then the table."""
    runs: dict[int, dict[str, tuple[float, float | None]]] = {}
    for n in sizes:
        env, target = store_of(n)
        folder = Path(env["SIM_DB"]).parent
        runs[n] = {}
        for step in steps:
            out = folder / f"{step.replace(' ', '_').replace('-', '')}.out"
            runs[n][step] = peak(step_args(step, target, folder), env, out, timeout)
            print(f"  {label} N={n:,} {step}: {runs[n][step][1]:.0f} MB", flush=True)
    table(label, sizes, steps, runs)


def table(label: str, sizes: list[int], steps: tuple[str, ...], runs: dict) -> None:
    print(f"\n{label}: peak RSS (wall time)")
    head = "".join(f"{f'N={n:,}':>22s}" for n in sizes)
    growth = "".join(f"{f'{b // a}x/{a:,}':>12s}" for a, b in itertools.pairwise(sizes))
    print(f"  {'step':18s}{head}  RSS growth{growth}")
    for step in steps:
        cells = [runs[n][step] for n in sizes]
        text = "".join(
            f"{f'{rss:.0f} MB ({wall:.0f} s)' if rss else 'failed':>22s}" for wall, rss in cells
        )
        ratios = "".join(
            f"{(b[1] / a[1] if a[1] and b[1] else float('nan')):>12.2f}"
            for a, b in itertools.pairwise(cells)
        )
        print(f"  {step:18s}{text}            {ratios}")
    print("  (growth: peak RSS at the larger size over the smaller; flat memory is 1.00)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, required=True, metavar="DIR", help="stores' folder")
    parser.add_argument("--sizes", default="10000,100000", help="conversation counts")
    parser.add_argument("--worlds", default="chat", help="chat, grid, network (comma-separated)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"of: {', '.join(STEPS)}")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per command")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    steps = tuple(s.strip() for s in args.steps.split(",") if s.strip())
    worlds = [w.strip() for w in args.worlds.split(",") if w.strip()]
    unknown = [s for s in steps if s not in STEPS] + [w for w in worlds if w not in KNOWN]
    if unknown:
        parser.error(f"unknown step or world {unknown[0]!r}")
    if not os.path.exists(TIME):
        parser.error(f"{TIME} is needed to read peak memory (apt-get install time)")
    work = args.keep.absolute()
    work.mkdir(parents=True, exist_ok=True)
    for world in worlds:
        if world == "chat":
            store_of = lambda n: chat_store(work, n, args.timeout)  # noqa: E731
            measure("chat sweep", sizes, steps, store_of, args.timeout)
            continue
        chosen = tuple(s for s in steps if s in WORLD_STEPS)
        store_of = lambda n, w=world: world_store(work, w, n, args.timeout)  # noqa: E731
        measure(f"{world} experiment", sizes, chosen, store_of, args.timeout)


if __name__ == "__main__":
    main()
