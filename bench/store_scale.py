"""The store at scale: what the CLI costs at 1k, 10k, 100k and 1M conversations.

For each size N it builds a store through the real paths (the CLI imports the prison
experiment; `llm-sim sweep create EXP FILE` plans N conversations and inserts them through
SweepsRepository.insert_conversations), then seeds mixed statuses (most done, some failed, a
few pending or running) and 20 messages per conversation for the first 100,000 conversations
(`--messages-up-to`). Seeding writes the embedded store's SQLite tables directly (a million
conversations in minutes); on a server it goes through pymongo. Then it times the real CLI
process of this checkout, as a user starts it, and reads its peak resident memory from
/usr/bin/time -v:

    sweep create       llm-sim sweep create EXP sweep.yaml --yes --json
    sweep status       llm-sim sweep status SWEEP
    conversation list  llm-sim conversation list        (the default page)
    list --experiment  llm-sim conversation list --experiment EXP
    list --mine        llm-sim conversation list --mine
    export             llm-sim export SWEEP -o DIR   (jsonl; also "export csv", "export parquet")
    measures           llm-sim measures SWEEP

and `llm-sim --help` (the start-up every command pays, the floor of the figures above), and,
in one warm process (the store's own share, without Python's start-up): `sweep status`'s
summary, the default listing page, and claiming a conversation (`claim_next`, averaged over 200
claims, then put back), which must not grow with N. It prints wall time, peak RSS and the
growth between sizes (10k/1k, ..., 1M/100k; linear is 10).
Embedded store (litemongo in a temp dir) by default; `--wire` runs the same on nx-27017 over
TCP (started on a free loopback port, as tests/conftest.py's `wire_server` does).

    python bench/store_scale.py                      # 1000,10000
    python bench/store_scale.py --sizes 100000,1000000 --keep /tmp/scale \
        --steps 'sweep create,sweep status,conversation list,list --experiment,list --mine'
    python bench/store_scale.py --sizes 1000,10000,100000 --wire
    python bench/store_scale.py --keep /tmp/scale --steps export,measures   # build once, reuse
    python bench/store_scale.py --sizes 100000 --keep /tmp/scale --baseline /tmp/older

With `--keep DIR` the stores are built in DIR and reused by later runs with the same DIR, so a
change can be timed before and after on the same data. `--baseline DIR` (a checkout of another
version of this tool) times the read steps of that version too, on the same store, in
interleaved rounds, and prints the ratio. Without `--keep` the stores live in a temporary
folder. Calls are not seeded (the calls table of the export stays empty); with `--steps 'sweep
create'` alone nothing is seeded. Above 10,000 the sweep has 10,000 repetitions per cell and
one cell per number of days (100,000: days 1 to 10). A sweep holds 100,000 conversations at
most, so 1M is ten such sweeps (other seeds), each created by the CLI: `sweep create` is the
last one's, into a store already holding 900,000, and `sweep create (all)` the ten together;
the read steps ask about the last sweep. The CLI runs as installed: without
PYTHONDONTWRITEBYTECODE, from .pyc files compiled once before timing. Not a test: it prints
figures.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.domain.clock import now  # noqa: E402
from simulator.store.conversation_rows import catch_up  # noqa: E402
from simulator.store.embedded import table_of  # noqa: E402
from simulator.store.embedded_writes import direct_table, rewrite  # noqa: E402
from simulator.store.repositories.messages import SCHEMA_VERSION, message_id  # noqa: E402
from simulator.store.store import open_store_uri  # noqa: E402
from simulator.testing.wire_server import wire_server  # noqa: E402

EXPERIMENT = ROOT / "prompts" / "experiments" / "prison.yaml"
USER = "bench"
MESSAGES = 20
CHECKOUT = ROOT  # whose main.py the CLI steps run (--baseline adds another)
MESSAGES_UP_TO = 100_000  # conversations that get messages (--messages-up-to)
TIME = "/usr/bin/time"
EXPORT_FORMATS = ("jsonl", "csv", "parquet")
STEPS = (
    "sweep create",
    "sweep status",
    "conversation list",
    "list --experiment",
    "list --mine",
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


def cli(
    args: list[str], env: dict, timeout: float, checkout: Path = CHECKOUT
) -> tuple[Measure, str]:
    """Run `llm-sim ARGS` (the checkout's main.py) as its own process; wall time and peak RSS
    (KiB from time -v)."""
    env = {**env, "PYTHONPATH": str(checkout)}
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        command = [sys.executable, str(checkout / "main.py"), *args]
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


MAX_SWEEP = 100_000  # conversations a sweep may hold: 1M is ten sweeps


def sweep_yaml(path: Path, n: int, number: int = 0) -> Path:
    """One cell of n repetitions up to 10,000; beyond, n / 10,000 cells that differ in their
    number of days (`every_day_count`), as a sweep of 100,000 must have at least 10 cells.
    `number`: which of several sweeps (another seed: other conversations)."""
    cells = -(-n // MAX_REPETITIONS)
    if n % cells:
        raise SystemExit(f"--sizes: {n} is not a multiple of {cells} cells")
    days = f"days: {cells}\nevery_day_count: true\n" if cells > 1 else "days: 1\n"
    path.write_text(
        f"name: scale {number}\n"
        f"repetitions: {n // cells}\n"
        "llms: [local:smollm2]\n"
        f"total_messages: {max(MESSAGES, 2 * cells)}\n"  # every day holds two at least
        f"{days}"
        "agents: {Guard: 1, Prisoner: 1}\n"
        "speaker_methods: [round_robin]\n"
        f"seed: {7 + number}\n"
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


def message(cid: str, i: int, text: str, created: Any) -> dict:
    """A message shaped as MessagesRepository writes it."""
    role = ("Guard", "Prisoner")[i % 2]
    return {
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


def status_of(position: int) -> str:
    """Most done; every 37th failed, 101st pending, 211th running (as before: ids[1::every])."""
    for status, every in (("running", 211), ("pending", 101), ("failed", 37)):
        if position % every == 1:
            return status
    return "done"


def seed(uri: str, db_name: str, sweep_ids: list[str], messages_up_to: int) -> float:
    """Mixed statuses for every conversation of the sweeps, 20 messages for the first
    `messages_up_to`; returns seconds spent. On the embedded store straight into its SQLite
    tables."""
    start = time.perf_counter()
    store = open_store_uri(uri, db_name)
    db = store.db
    ids = [cid for sweep_id in sweep_ids for cid in store.sweeps.conversation_ids(sweep_id)]
    rng = random.Random(7)
    created = now()
    messages = direct_table(db.messages)
    batch: list[dict] = []
    for cid in ids[:messages_up_to]:
        batch += [message(cid, i, reply_text(rng), created) for i in range(MESSAGES)]
        if len(batch) >= 5000:
            _insert(db, messages, batch)
            batch = []
    if batch:
        _insert(db, messages, batch)
    counters = {"messages": MESSAGES, "calls": MESSAGES, "tokens_out": 80 * MESSAGES}
    table = table_of(db.conversations)
    for first in range(0, len(ids), 50_000):
        chunk = ids[first : first + 50_000]
        if table is not None:
            _set_statuses(db.conversations, table, chunk, first, counters, created)
        else:
            for position, cid in enumerate(chunk, first):
                status = status_of(position)
                fields = {"status": status, "counters": counters, "started_at": created}
                fields["error"] = "bench" if status == "failed" else None
                db.conversations.update_one({"_id": cid}, {"$set": fields})
    if table is not None:
        catch_up(table)  # the rows of the seeded documents, as the next command would
    store.close()
    return time.perf_counter() - start


def _insert(db: Any, direct: Any, batch: list[dict]) -> None:
    if direct is not None and direct.can_insert():
        direct.insert(batch)
    else:
        db.messages.insert_many(batch)


def _set_statuses(
    collection: Any, table: Any, ids: list[str], first: int, counters: dict, created: Any
) -> None:
    """The statuses of these conversations, read and written by primary key in one
    transaction (the triggers mark them; `catch_up` rewrites their rows)."""

    def change(i: int, doc: dict) -> bool:
        status = status_of(first + i)
        doc.update(status=status, counters=counters, started_at=created)
        doc["error"] = "bench" if status == "failed" else None
        return True

    rewrite(collection, table, ids, change)


def one_size(
    uri: str,
    db_name: str,
    n: int,
    work: Path,
    timeout: float,
    steps: tuple[str, ...] = STEPS,
    built: Path | None = None,
    baseline: Path | None = None,
    messages_up_to: int = MESSAGES_UP_TO,
) -> dict[str, Measure]:
    """Build the store of size n (sweep create and seeding always run) and time `steps`.
    `built`: a file naming the sweep of a store kept from an earlier run (--keep); when it
    exists, the store is reused as it is (no sweep create). `baseline`: another checkout
    whose read steps are timed too, alternating with this one's."""
    env = {**os.environ, "SIM_DB": uri, "SIM_DB_NAME": db_name, "SIM_USER": USER}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: from .pyc files, not recompiled
    env.update({"HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1"})
    results: dict[str, Measure] = {}
    if built is not None and built.exists():
        sweep_id = json.loads(built.read_text())["sweep_id"]
        print(f"  N={n}: reusing the store kept with sweep {sweep_id}", flush=True)
        steps = tuple(s for s in steps if s != "sweep create")
    else:
        _, out = cli(["experiment", "import", str(EXPERIMENT), "--json"], env, timeout)
        experiment_id = json.loads(out)["id"]
        sweep_ids = []
        for number in range(-(-n // MAX_SWEEP)):  # the last one into a store of n - 100,000
            spec = sweep_yaml(work / f"sweep_{n}_{number}.yaml", min(n, MAX_SWEEP), number)
            created, out = cli(
                ["sweep", "create", experiment_id, str(spec), "--yes", "--json"], env, timeout
            )
            if not out:
                results["sweep create"] = created
                return results
            sweep_ids.append(json.loads(out)["sweep_id"])
            if number:
                print(f"  N={n}: sweep {number + 1} created in {_seconds(created.wall_s)}")
            results["sweep create"] = created
            total = results.get("sweep create (all)")
            walls = (total.wall_s or 0) + (created.wall_s or 0) if total else created.wall_s
            results["sweep create (all)"] = Measure(walls, None, created.code)
        if len(sweep_ids) == 1:
            results.pop("sweep create (all)")
        sweep_id = sweep_ids[-1]
        if set(steps) == {"sweep create"}:  # nothing reads the messages: no seeding
            return results
        with_messages = min(n, messages_up_to)
        print(f"  N={n}: seeding {with_messages * MESSAGES:,} messages …", flush=True)
        seconds = seed(uri, db_name, sweep_ids, messages_up_to)
        print(f"  N={n}: seeded in {seconds:.1f} s", flush=True)
        if built is not None:
            built.write_text(json.dumps({"sweep_id": sweep_id}))
    store = open_store_uri(uri, db_name)  # the first open builds what an older store lacks
    experiment_id = store.sweeps.get(sweep_id)["experiment_id"]
    store.close()
    reads = {
        "sweep status": ["sweep", "status", sweep_id],
        "conversation list": ["conversation", "list"],
        "list --experiment": ["conversation", "list", "--experiment", experiment_id],
        "list --mine": ["conversation", "list", "--mine"],
    }
    if any(step in steps for step in reads):  # the floor of every CLI step: Python's start-up
        results["start-up (--help)"], _ = cli(["--help"], env, timeout)
    for step, args in reads.items():
        if step not in steps:
            continue
        if baseline is not None:  # the other version first: it pays for a cold page cache
            results[f"{step} (baseline)"], _ = cli(args, env, timeout, baseline)
        results[step], out = cli(args, env, timeout)
        if baseline is not None:
            again, _ = cli(args, env, timeout, baseline)
            results[f"{step} (baseline)"] = _best(results[f"{step} (baseline)"], again)
            mine, out = cli(args, env, timeout)
            results[step] = _best(results[step], mine)
        lines = [line for line in out.splitlines() if line.strip()]
        if step != "sweep status":
            print(f"  N={n}: {step} printed {len(lines)} lines; last: {lines[-1:]}")
    results.update(warm(uri, db_name, sweep_id, experiment_id))
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
        results.pop("sweep create (all)", None)
    return results


def _best(a: Measure, b: Measure) -> Measure:
    """The faster of two rounds (the machine is shared: the slower one waited for others)."""
    if a.wall_s is None:
        return b
    return a if b.wall_s is None or a.wall_s <= b.wall_s else b


CLAIMS = 200


def warm(uri: str, db_name: str, sweep_id: str, experiment_id: str) -> dict[str, Measure]:
    """The store's share of the read steps, in one process already started and connected:
    `sweep status`'s summary, the default listing page with its count, the experiment's page,
    and one claim of the next conversation (averaged over CLAIMS claims, then put back)."""
    from simulator.services import conversation_listing, sweeps

    store = open_store_uri(uri, db_name)
    found: dict[str, Measure] = {}
    try:
        for step, ask in (
            ("status (in process)", lambda: sweeps.status(store, sweep_id)),
            ("list (in process)", lambda: conversation_listing.list_page(store, USER)),
            (
                "list --experiment (in pr.)",
                lambda: conversation_listing.list_page(store, USER, experiment_id),
            ),
        ):
            began = time.perf_counter()
            ask()
            found[step] = Measure(time.perf_counter() - began, None, 0)
        worker = "bench:0:claims"
        taken = []
        began = time.perf_counter()
        for _ in range(CLAIMS):
            doc = store.sweeps.claim_next(sweep_id, worker, 60_000)
            if doc is None:
                break
            taken.append((doc["_id"], doc["status"]))
        spent = time.perf_counter() - began
        for conversation_id, _ in taken:  # put back: waiting again, no lease
            store.conversations.set_status(conversation_id, "pending", lease_owner=worker)
            store.sweeps.release(conversation_id, worker)
        if taken:
            found["claim (per claim)"] = Measure(spent / len(taken), None, 0)
    finally:
        store.close()
    return found


def fmt(value: float | None, unit: str) -> str:
    return "timeout" if value is None else f"{value:.2f} {unit}"


def report(label: str, sizes: list[int], runs: dict[int, dict[str, Measure]]) -> None:
    print(f"\n{label}")
    head = "".join(f"{f'N={n:,}':>22s}" for n in sizes)
    growth = "".join(f"{f'{b // a}x/{a:,}':>14s}" for a, b in itertools.pairwise(sizes))
    print(f"  {'step':26s}{head}  growth{growth}")
    names = list(dict.fromkeys(step for n in sizes for step in runs.get(n, {})))
    for step in names:
        cells, walls = [], []
        for n in sizes:
            m = runs.get(n, {}).get(step)
            walls.append(m.wall_s if m else None)
            rss = "" if m is None or m.rss_mb is None else f" {fmt(m.rss_mb, 'MB')}"
            text = "-" if m is None else f"{_seconds(m.wall_s)}{rss}"
            cells.append(f"{text:>22s}")
        ratios = "".join(
            f"{(b / a if a and b else float('nan')):>14.1f}" for a, b in itertools.pairwise(walls)
        )
        print(f"  {step:26s}{''.join(cells)}        {ratios}")
    print("  (cells: wall time, peak RSS of the CLI process; growth: wall-time ratio, linear = 10)")
    for n in sizes:
        for step, m in runs.get(n, {}).items():
            base = runs[n].get(f"{step} (baseline)")
            if base and base.wall_s and m.wall_s:
                print(f"  N={n:,} {step}: baseline / this = {base.wall_s / m.wall_s:.1f}x")


def _seconds(value: float | None) -> str:
    if value is None:
        return "timeout"
    return f"{value * 1000:.1f} ms" if value < 0.1 else f"{value:.2f} s"


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
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="DIR",
        help="a checkout of another version: its read steps are timed too, interleaved",
    )
    parser.add_argument(
        "--messages-up-to",
        type=int,
        default=MESSAGES_UP_TO,
        metavar="N",
        help=f"seed messages for the first N conversations only (default {MESSAGES_UP_TO:,})",
    )
    args = parser.parse_args(argv)
    steps = tuple(s.strip() for s in args.steps.split(",") if s.strip())
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        parser.error(f"unknown step {unknown[0]!r}; choose from: {', '.join(STEPS)}")
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    for checkout in (CHECKOUT, args.baseline):
        if checkout is not None:  # as installed: .pyc files, compiled once before timing
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            command = [sys.executable, "-m", "compileall", "-q", str(Path(checkout) / "simulator")]
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
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
                runs[n] = one_size(
                    str(folder / "db"),
                    "scale",
                    n,
                    work,
                    args.timeout,
                    steps,
                    built,
                    args.baseline,
                    args.messages_up_to,
                )
            report(
                f"embedded store (litemongo){_messages_note(sizes, args.messages_up_to)}",
                sizes,
                runs,
            )
        if args.wire or args.wire_only:
            wire_runs: dict[int, dict[str, Any]] = {}
            with wire_server(work) as uri:
                for n in sizes:
                    built = work / f"wire_{n}.json" if kept else None
                    wire_runs[n] = one_size(
                        uri,
                        f"scale_{n}",
                        n,
                        work,
                        args.timeout,
                        steps,
                        built,
                        args.baseline,
                        args.messages_up_to,
                    )
            report("nx-27017 over TCP", sizes, wire_runs)


def _messages_note(sizes: list[int], up_to: int) -> str:
    if max(sizes) <= up_to:
        return f"; {MESSAGES} messages per conversation"
    return f"; {MESSAGES} messages per conversation for the first {up_to:,} of each size"


if __name__ == "__main__":
    main()
