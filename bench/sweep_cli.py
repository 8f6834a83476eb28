"""The sweep path as a user runs it: the real `llm-sim sweep run` process against the bare client.

A sweep of `--conversations` x `--messages` (prison experiment, one Guard and one Prisoner, round
robin, one day: one call per message plus one summary call) is created in a fresh database for
every round (not timed), then run by the real CLI process, started as a user starts it:

    llm-sim --db DB sweep run SWEEP --concurrency 32

against the loopback OpenAI-protocol stub in its own process (`--latency` seconds per call). In the
same run, interleaved with it (order alternating per round), the floor: `bench/bare_client.py`, a
process that sends exactly the prompts the sweep sent (read back from the store's call ledger)
through `openai.AsyncOpenAI` (`chat.completions.create`) with as many workers; and the same
process making the lean call (`client.post` of the body, reply read as JSON, no request
transform or response models), the cheapest way through the openai client. The tool itself
calls a plain-HTTP server through its own lean client (simulator/llm/lean_http.py). All sides are
whole processes, start-up included, and all print wall time and CPU ms per call (user + system,
from wait4).

Targets: median wall(CLI) / wall(lean call) <= 1.1 and CPU per call within 1.2x of it (and so
<= 1.2 of the floor), on the embedded store and (`--wire`) on MongoDB over TCP (nx-27017).

    python bench/sweep_cli.py
    python bench/sweep_cli.py --wire --rounds 5
    python bench/sweep_cli.py --profile 30     # + one CLI run under cProfile, top 30

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sweep_overhead import MODEL, bucket_of, make_sweep, stub_server, sweep_calls  # noqa: E402

from simulator.store.store import open_store_uri  # noqa: E402
from simulator.testing.wire_server import wire_server  # noqa: E402

LLM_SIM = shutil.which("llm-sim")
CLI = [LLM_SIM] if LLM_SIM else [sys.executable, "-m", "simulator.cli.main"]


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    server_cpu_s: float = 0.0  # the database server's CPU meanwhile (nx-27017 only)


def process_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of a running process (Linux /proc); 0 when unknown."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(command: list[str], env: dict[str, str], server_pid: int | None = None) -> Run:
    """Run a process to its end; wall time from start to exit, CPU (user + sys) from wait4."""
    server_before = process_cpu_s(server_pid)
    start = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate()  # drains the pipes; the child is reaped below
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: {err.decode()[-600:]}")
    usage = proc_rusage.pop(proc.pid, None)
    server = process_cpu_s(server_pid) - server_before
    return Run(wall, usage if usage is not None else float("nan"), server)


proc_rusage: dict[int, float] = {}


def _reap_with_rusage() -> None:
    """Replace Popen's waitpid with wait4 so each child's own CPU time is kept."""
    original = os.waitpid

    def waitpid(pid: int, options: int):
        if pid <= 0:
            return original(pid, options)
        got, status, usage = os.wait4(pid, options)
        if got:
            proc_rusage[got] = usage.ru_utime + usage.ru_stime
        return got, status

    os.waitpid = waitpid  # type: ignore[assignment]


@contextlib.contextmanager
def database(wire: bool, work: Path) -> Iterator[tuple[str, list[str], int | None]]:
    """Yield (a store URI for this process, the CLI's --db flags, the server's pid or None)."""
    if not wire:
        yield str(work), ["--db", str(work)], None
        return
    work.mkdir(parents=True, exist_ok=True)
    with wire_server(work) as uri:
        yield uri, ["--db", uri], int((work / "nx.pid").read_text().strip())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--conversations", type=int, default=64)
    p.add_argument("--messages", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--latency", type=float, default=0.05, help="stub seconds per call")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--wire", action="store_true", help="MongoDB over TCP (nx-27017)")
    p.add_argument("--profile", type=int, default=0, metavar="N")
    p.add_argument("--profile-out", type=Path, help="keep the profile (pstats file) here")
    args = p.parse_args(argv)
    _reap_with_rusage()
    with (
        tempfile.TemporaryDirectory(prefix="sim-cli-bench-") as tmp,
        stub_server(args.latency, in_process=False) as base_url,
    ):
        measure(args, base_url, Path(tmp))


def measure(args: argparse.Namespace, base_url: str, tmp: Path) -> None:
    env = dict(os.environ, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-bench-dummy")
    env["SIM_USER"] = "bench"
    env.pop("SIM_DB", None)
    # as installed: modules compiled once (round 0) and read back from __pycache__ afterwards,
    # not compiled from source in every process (the bare client's openai package is compiled)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    prompts_file = tmp / "prompts.json"
    runs: dict[str, list[Run]] = {"cli": [], "floor": [], "lean": []}
    calls = 0
    label = "MongoDB over TCP (nx-27017)" if args.wire else "embedded store"
    with database(args.wire, tmp / "db") as (uri, db_flags, server_pid):
        for r in range(args.rounds + 1):  # round 0 warms caches and collects the prompts
            db_name = f"round{r}"
            store = open_store_uri(uri, db_name) if args.wire else open_store_uri(f"{uri}{r}")
            flags = [*db_flags, "--db-name", db_name] if args.wire else ["--db", f"{uri}{r}"]
            sweep_id = make_sweep(store, args.conversations, args.messages, seed=1 + r)
            store.close()
            cli = [*CLI, *flags, "sweep", "run", sweep_id, "--concurrency", str(args.concurrency)]
            floor = [sys.executable, str(ROOT / "bench" / "bare_client.py"), "--base-url"]
            floor += [base_url, "--model", MODEL, "--prompts", str(prompts_file)]
            floor += ["--concurrency", str(args.concurrency)]
            commands = {"cli": cli, "floor": floor, "lean": [*floor, "--lean"]}
            if r == 0:
                timed(cli, env)
                store = open_store_uri(uri, db_name) if args.wire else open_store_uri(f"{uri}{r}")
                calls, prompts = sweep_calls(store, sweep_id)
                store.close()
                prompts_file.write_text(json.dumps(prompts))
                timed(floor, env)
                continue
            order = ("cli", "floor", "lean") if r % 2 else ("lean", "floor", "cli")
            for side in order:
                runs[side].append(timed(commands[side], env, server_pid))
        if args.profile:
            profile_once(args, uri, db_flags, env, tmp)
    report(args, label, calls, runs)


def report(args, label: str, calls: int, runs: dict[str, list[Run]]) -> None:
    def median(side: str, key: str) -> float:
        return statistics.median(getattr(x, key) for x in runs[side])

    def ratio(side: str, key: str = "wall_s") -> float:
        return median("cli", key) / median(side, key)

    print(
        f"Sweep via the real CLI process: {args.conversations} conversations x {args.messages} "
        f"messages = {calls} calls, concurrency {args.concurrency}, stub latency "
        f"{args.latency * 1000:g} ms in its own process, {label}, {os.cpu_count()} CPUs, "
        f"{args.rounds} interleaved round(s); whole processes, start-up included"
    )
    names = {
        "cli": "llm-sim sweep run",
        "floor": "floor: bare openai client",
        "lean": "bare client, lean call (client.post)",
    }
    for side, name in names.items():
        walls = ", ".join(f"{x.wall_s:.2f}" for x in runs[side])
        cpu = median(side, "cpu_s") * 1000 / calls
        wall = median(side, "wall_s")
        print(f"  {name:38s} wall {wall:6.2f} s  CPU {cpu:5.2f} ms/call  ({walls})")
    if args.wire:
        server = median("cli", "server_cpu_s")
        print(
            f"  nx-27017 server CPU during the CLI run: {server:.2f} s = "
            f"{server * 1000 / calls:.2f} ms/call (a third process on {os.cpu_count()} CPUs)"
        )
    theory = calls * args.latency / args.concurrency
    print(f"  theory: calls x latency / concurrency  {theory:.2f} s (orientation only)")
    verdict = "OK" if ratio("floor") <= 1.2 else "MISSED"
    print(f"  ratio CLI / bare openai client: wall {ratio('floor'):.2f} (target <= 1.2 {verdict}),")
    print(f"    CPU {ratio('floor', 'cpu_s'):.2f}")
    wall_ok = "OK" if ratio("lean") <= 1.1 else "MISSED"
    cpu_ok = "OK" if ratio("lean", "cpu_s") <= 1.2 else "MISSED"
    lean = ratio("lean")
    print(f"  ratio CLI / bare client's lean call: wall {lean:.2f} (target <= 1.1 {wall_ok}),")
    print(f"    CPU {ratio('lean', 'cpu_s'):.2f} (target <= 1.2 {cpu_ok})")


def profile_once(args, uri: str, db_flags: list[str], env: dict, tmp: Path) -> None:
    """One more CLI run under cProfile (wall inflated by the profiler); prints the top N."""
    db_name = "profiled"
    target = uri if args.wire else f"{uri}-profiled"
    store = open_store_uri(target, db_name) if args.wire else open_store_uri(target)
    sweep_id = make_sweep(store, args.conversations, args.messages, seed=999)
    store.close()
    flags = [*db_flags, "--db-name", db_name] if args.wire else ["--db", target]
    out = tmp / "cli.prof"
    entry = tmp / "llm_sim_entry.py"
    entry.write_text("from simulator.cli.main import main\nmain()\n")
    command = [sys.executable, "-m", "cProfile", "-o", str(out), str(entry)]
    timed([*command, *flags, "sweep", "run", sweep_id, "--concurrency", str(args.concurrency)], env)
    if args.profile_out:
        shutil.copyfile(out, args.profile_out)
    stats = pstats.Stats(str(out))
    totals: dict[str, float] = {}
    for func, (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        totals[bucket_of(func)] = totals.get(bucket_of(func), 0.0) + tottime
    calls = args.conversations * (args.messages + 1)
    print("\nOne more CLI run under cProfile, own time by area:")
    for area, secs in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {area:34s} {secs:8.2f} s {secs * 1000 / calls:8.3f} ms/call")
    stats.sort_stats("tottime").print_stats(args.profile)
    stats.sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
