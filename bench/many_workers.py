"""Many workers: 1, 2, 4 and 8 `llm-sim sweep work` processes on one MongoDB server.

When the inference backend is the bottleneck, more workers should raise a sweep's throughput
until something else is. Here each worker can have only `--concurrency` conversations and
`--pool` calls in flight at once, and every call takes the stub `--latency` seconds, so one
worker is bound by latency, not CPU. The stub (its own process) answers at most
`--server-slots` calls at once and queues the rest, as an inference server with that many slots
does (0, the default: no limit).

In the same run, on one nx-27017 server (the MongoDB wire protocol over SQLite, its own process),
with a fresh database and an equal fresh sweep of `--conversations` x `--messages` for each side
(prison experiment, one Guard and one Prisoner, one day: one call per message plus one summary),
N workers started together, each

    llm-sim --db URI --db-name wN-rR sweep work SWEEP --concurrency C --pool openai=P

for each N of `--workers`, in the other order in every second round. All sides are whole
processes, start-up included. Throughput is the ledger's calls (and conversations) over the
sweep's span (first call sent to last reply); the table gives it, its ratio to one worker, the
bound latency and slots allow, the workers' CPU per call and the nx-27017 server's CPU.

Each sweep is then checked for "every conversation done exactly once": all done, each claimed
once, its messages and ledger rows as many as the spec says, every call answered at the first
attempt, and the stub served exactly as many chat requests as the ledger holds.

`--servers 2` gives every other worker a second stub (its own OPENAI_BASE_URL; one pool per
endpoint).

    python bench/many_workers.py                      # no slot limit: where the machine stops
    python bench/many_workers.py --server-slots 16    # a server answering 16 calls at once
    python bench/many_workers.py --workers 1,2 --rounds 3

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sweep_cli import CLI, _reap_with_rusage, proc_rusage, process_cpu_s  # noqa: E402
from sweep_overhead import MODEL, USER, make_sweep  # noqa: E402

from simulator.store.store import Store, open_store_uri  # noqa: E402
from simulator.testing.wire_server import wire_server  # noqa: E402

# The stub in its own process; each line on its stdin asks for its counts (then reset).
STUB_PROGRAM = """
import json, sys
from simulator.testing.llm_stub_server import StubLLMServer
latency, slots, model = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
stub = StubLLMServer(latency_s=latency, models=[model]).start()
stub.max_concurrent = slots or None
print(stub.openai_base_url, flush=True)
for _line in sys.stdin:
    counts = {"chat": len(stub.chat_requests), "max_in_flight": stub.max_in_flight}
    print(json.dumps(counts), flush=True)
    stub.reset()
stub.stop()
"""


class Stub:
    """One stub process: its OpenAI base URL, and its counts since the last ask."""

    def __init__(self, latency_s: float, slots: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", STUB_PROGRAM, str(latency_s), str(slots), MODEL],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            raise RuntimeError("the stub server did not start")

    def counts(self) -> dict[str, int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("counts\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@contextlib.contextmanager
def stubs(n: int, latency_s: float, slots: int) -> Iterator[list[Stub]]:
    started: list[Stub] = []
    try:
        for _ in range(n):
            started.append(Stub(latency_s, slots))
        yield started
    finally:
        for stub in started:
            stub.close()


@dataclass
class Side:
    workers: int
    wall_s: float  # first worker started to last worker exited
    span_s: float  # the ledger's first call sent to its last reply
    calls: int
    cpu_s: float  # the workers' CPU, all together
    server_cpu_s: float  # nx-27017's CPU meanwhile
    split: dict[str, int]  # conversations per worker (last_worker)
    stub_calls: int
    stub_max_in_flight: int
    problems: list[str]
    first_call_s: float = 0.0  # from the workers' launch to the ledger's first call

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.span_s

    @property
    def calls_per_wall_s(self) -> float:
        return self.calls / self.wall_s


def run_workers(commands: list[list[str]], envs: list[dict[str, str]]) -> tuple[float, float]:
    """Start every worker at once; (wall seconds to the last exit, their CPU seconds)."""
    start = time.perf_counter()
    procs = [
        subprocess.Popen(c, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for c, e in zip(commands, envs, strict=True)
    ]
    errors = [p.communicate()[1] for p in procs]
    wall = time.perf_counter() - start
    for proc, err in zip(procs, errors, strict=True):
        if proc.returncode != 0:
            raise RuntimeError(f"a worker exited {proc.returncode}: {err.decode()[-800:]}")
    cpu = sum(proc_rusage.pop(p.pid, float("nan")) for p in procs)
    return wall, cpu


def _moment(value: datetime | str) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check_sweep(store: Store, sweep_id: str, messages: int) -> tuple:
    """(ledger calls, ledger span in seconds, conversations per worker, problems found, the
    first call's moment)."""
    problems: list[str] = []
    convs = store.sweeps.conversations(sweep_id)
    ids = [c["_id"] for c in convs]
    not_done = [c["_id"] for c in convs if c.get("status") != "done"]
    if not_done:
        problems.append(f"{len(not_done)} conversation(s) not done, e.g. {not_done[0]}")
    twice = [c["_id"] for c in convs if c.get("claims", 0) != 1]
    if twice:
        problems.append(f"{len(twice)} conversation(s) claimed more than once, e.g. {twice[0]}")
    per_conv = Counter(
        d["conversation_id"]
        for d in store.db.messages.find({"conversation_id": {"$in": ids}}, {"conversation_id": 1})
    )
    wrong = [i for i in ids if per_conv[i] != messages]
    if wrong:
        problems.append(
            f"{len(wrong)} conversation(s) hold a message count other than {messages}, "
            f"e.g. {wrong[0]}: {per_conv[wrong[0]]}"
        )
    rows = list(
        store.db.calls.find(
            {"conversation_id": {"$in": ids}},
            {"conversation_id": 1, "created_at": 1, "latency_s": 1, "attempt": 1, "state": 1},
        )
    )
    calls_per_conv = Counter(r["conversation_id"] for r in rows)
    expected_calls = messages + 1  # one per message, one summary for the one day
    wrong = [i for i in ids if calls_per_conv[i] != expected_calls]
    if wrong:
        problems.append(
            f"{len(wrong)} conversation(s) hold a ledger count other than {expected_calls}, "
            f"e.g. {wrong[0]}: {calls_per_conv[wrong[0]]}"
        )
    retried = [r["_id"] for r in rows if r.get("attempt") != 1 or r.get("state") != "done"]
    if retried:
        problems.append(f"{len(retried)} ledger row(s) not a first attempt answered (state done)")
    first = min(_moment(r["created_at"]) for r in rows)
    last = max(_moment(r["created_at"]) + timedelta(seconds=r["latency_s"] or 0) for r in rows)
    split = Counter(str(c.get("last_worker")) for c in convs)
    return len(rows), (last - first).total_seconds(), dict(split), problems, first


def measure_side(
    args: argparse.Namespace,
    uri: str,
    db_name: str,
    workers: int,
    servers: list[Stub],
    seed: int,
    server_pid: int,
) -> Side:
    store = open_store_uri(uri, db_name)
    try:
        sweep_id = make_sweep(store, args.conversations, args.messages, seed=seed)
    finally:
        store.close()
    command = [*CLI, "--db", uri, "--db-name", db_name, "sweep", "work", sweep_id, "--json"]
    command += ["--concurrency", str(args.concurrency), "--pool", f"openai={args.pool}"]
    command += ["--lease-ttl", str(args.lease_ttl)]
    envs = []
    for i in range(workers):
        env = dict(os.environ, OPENAI_API_KEY="sk-bench-dummy", SIM_USER=USER)
        env["OPENAI_BASE_URL"] = servers[i % len(servers)].base_url
        env.pop("SIM_DB", None)
        env.pop("SIM_DB_NAME", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled once, then read back
        envs.append(env)
    for stub in servers:
        stub.counts()  # reset
    server_before = process_cpu_s(server_pid)
    launched = datetime.now(UTC)
    wall, cpu = run_workers([command] * workers, envs)
    server_cpu = process_cpu_s(server_pid) - server_before
    counts = [stub.counts() for stub in servers]
    store = open_store_uri(uri, db_name)
    try:
        calls, span, split, problems, first = check_sweep(store, sweep_id, args.messages)
    finally:
        store.close()
    stub_calls = sum(c["chat"] for c in counts)
    if stub_calls != calls:
        problems.append(f"the stub served {stub_calls} chat requests, the ledger holds {calls}")
    expected = args.conversations * (args.messages + 1)
    if calls != expected:
        problems.append(f"{calls} calls in the ledger, the spec asks for {expected}")
    peak = max(c["max_in_flight"] for c in counts)
    side = Side(workers, wall, span, calls, cpu, server_cpu, split, stub_calls, peak, problems)
    side.first_call_s = (first - launched).total_seconds()
    return side


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", default="1,2,4,8", help="worker counts to compare (1,2,4,8)")
    p.add_argument("--conversations", type=int, default=64, help="per sweep (default 64)")
    p.add_argument("--messages", type=int, default=10, help="per conversation (default 10)")
    p.add_argument("--concurrency", type=int, default=4, help="per worker (default 4)")
    p.add_argument("--pool", type=int, default=4, help="--pool openai=N per worker (default 4)")
    p.add_argument("--latency", type=float, default=0.2, help="stub seconds per call")
    p.add_argument(
        "--server-slots",
        type=int,
        default=0,
        help="calls a stub answers at once, the rest queued (default 0: no limit)",
    )
    p.add_argument("--servers", type=int, choices=(1, 2), default=1, help="stubs (endpoints)")
    p.add_argument("--lease-ttl", type=float, default=60.0)
    p.add_argument("--rounds", type=int, default=2, help="each runs every side (default 2)")
    args = p.parse_args(argv)
    counts = sorted({int(n) for n in args.workers.split(",")})
    if not counts or counts[0] < 1:
        p.error("--workers: give worker counts of 1 or more, e.g. 1,2,4,8")
    _reap_with_rusage()
    # as installed: the workers read compiled modules rather than compile them from source
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "simulator")], env=env)
    sides: dict[int, list[Side]] = {n: [] for n in counts}
    with (
        tempfile.TemporaryDirectory(prefix="sim-many-workers-") as tmp,
        wire_server(Path(tmp)) as uri,
        stubs(args.servers, args.latency, args.server_slots) as servers,
    ):
        server_pid = int((Path(tmp) / "nx.pid").read_text().strip())
        for r in range(args.rounds):
            order = counts if r % 2 == 0 else list(reversed(counts))
            for workers in order:
                name, seed = f"w{workers}-r{r}", 100 * r + workers
                side = measure_side(args, uri, name, workers, servers, seed, server_pid)
                sides[workers].append(side)
                print(f"  round {r + 1}, {workers} worker(s): {describe(side)}", flush=True)
    report(args, sides)


def describe(side: Side) -> str:
    split = "/".join(str(n) for n in sorted(side.split.values(), reverse=True))
    return (
        f"{side.calls} calls, span {side.span_s:.2f} s = {side.calls_per_s:.1f} calls/s; "
        f"wall {side.wall_s:.2f} s; conversations per worker {split}; stub peak "
        f"{side.stub_max_in_flight} at once; workers' CPU {side.cpu_s * 1000 / side.calls:.1f} "
        f"ms/call, nx-27017 {side.server_cpu_s * 1000 / side.calls:.1f} ms/call"
    )


def report(args: argparse.Namespace, sides: dict[int, list[Side]]) -> None:
    def median(workers: int, key: str) -> float:
        return statistics.median(getattr(s, key) for s in sides[workers])

    slots = args.server_slots or "no limit"
    calls = args.conversations * (args.messages + 1)
    print(
        f"\nMany workers on one MongoDB (nx-27017): sweeps of {args.conversations} conversations "
        f"x {args.messages} messages = {calls} calls each; per worker --concurrency "
        f"{args.concurrency} --pool openai={args.pool}; stub latency {args.latency * 1000:g} ms, "
        f"slots per stub: {slots}, {args.servers} stub(s); {os.cpu_count()} CPUs; "
        f"{args.rounds} round(s), medians"
    )
    per_worker = min(args.concurrency, args.pool) / args.latency
    print(
        f"  {'workers':>7s} {'conv/s':>7s} {'calls/s':>8s} {'x one':>6s} {'bound':>7s} "
        f"{'wall s':>7s} {'1st call':>8s} {'CPU/call':>9s} {'nx CPU':>7s} {'nx busy':>8s}"
    )
    one = median(min(sides), "calls_per_s")
    for workers in sorted(sides):
        rate = median(workers, "calls_per_s")
        bound = per_worker * workers
        if args.server_slots:
            bound = min(bound, args.server_slots * args.servers / args.latency)
        server_cpu = median(workers, "server_cpu_s")
        busy = server_cpu / median(workers, "span_s")
        first = median(workers, "first_call_s")
        print(
            f"  {workers:7d} {rate / (args.messages + 1):7.2f} {rate:8.1f} {rate / one:6.2f} "
            f"{bound:7.1f} {median(workers, 'wall_s'):7.2f} {first:7.2f}s "
            f"{median(workers, 'cpu_s') * 1000 / calls:7.1f}ms "
            f"{server_cpu * 1000 / calls:5.1f}ms {busy:7.0%}"
        )
    print(
        "  conv/s and calls/s over the ledger's span (first call sent to last reply); x one: "
        "to the fewest workers; bound: what latency, concurrency and the stub's slots allow; "
        "1st call: from the launch to the first call (start-up); CPU/call: all workers' CPU per "
        "call, start-up included; nx busy: the nx-27017 server's CPU over the span (100% = one "
        "core)"
    )
    problems = [p for runs in sides.values() for side in runs for p in side.problems]
    if problems:
        print("  exactly once: FAILED")
        for problem in problems:
            print(f"    {problem}")
    else:
        print(
            "  exactly once: OK (every conversation done and claimed once, its messages and "
            "ledger rows as the spec says, all first attempts, stub requests = ledger rows)"
        )


if __name__ == "__main__":
    main()
