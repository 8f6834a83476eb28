"""A network round as a user runs it: the real `llm-sim run` process against the bare client.

The speed and memory target: a 1,000-agent round on the loopback stub at 50 ms, concurrency
64, within 1.2x the lean bare-client floor in the same run, memory flat over 20 rounds; and
the same at 10,000 agents (AgentSociety's scale) in one round, peak RSS under 1 GB.

An opinion-network experiment like `prompts/experiments/llm_sam_network.yaml` is written to a
temp folder with a Barabasi-Albert graph of `--agents` nodes (m = 5, seed 1) and an agents CSV of
as many rows (the shipped synthetic table's rows repeated under new names, their opinions
nudged), imported into a fresh store for every run (a temp SIM_DB folder, not timed) as a user
imports it (`python main.py experiment import FILE --json`), then run by the real CLI process:

    python main.py run EXP --llm openai:stub --rounds 3 --seed 1 --pool openai=64 --json

against the loopback OpenAI-protocol stub (`--latency` seconds per call, served on threads of
this otherwise idle process, so its `max_in_flight` can be read: the concurrency really reached;
every reply is a valid answer, so no call is retried). Round 0 is the table's and makes no call;
each round t >= 1 sends all agents' calls at once, at most `--concurrency` in flight (the
endpoint pool, `--pool openai=N`): 1,000 x 3 = 3,000 calls in 3 waves.

In the same run, interleaved with it (order alternating per repetition), two floors: a
process (bench/grid_cli.py's bare script, free of simulator imports) that sends exactly the
request bodies the CLI sent (read back from the store's call ledger of a warm-up run), round by
round, each round waiting for the one before, through `openai.AsyncOpenAI` with an
asyncio.Semaphore of the same size: making the lean call the tool's OpenAI backend makes
(`client.post` of the body), the headline's floor, and the package's
`chat.completions.create` (its request transform costs more than the tool's call: printed
beside). All sides are whole processes, start-up included (wall from start to exit, CPU and
peak RSS from wait4); the CLI's own span (first call's created_at to the run's finished_at,
from the store) and the floors' span (first call sent to last reply) are printed too, and so
are the graph's build time in the bench process and the `experiment import`'s wall and peak RSS
(it builds the graph and reads the agents table).

Target: median wall(CLI) / wall(lean call) <= 1.2; at 10,000 agents peak RSS under 1 GB and
the graph built in seconds.

Memory (`--rss-rounds 20`, 0 to skip): one CLI run of 5 rounds and one of 20, peak RSS of each
process (wait4's ru_maxrss, read by a small spawner process: see SPAWNER); flat when the
20-round peak is within 10% or 15 MB of the 5-round one. Then the no-LLM theory's timing line
(bench/network_theory.py, which measures it in full: `python bench/network_theory.py`).

    python bench/network_round.py                      # 1,000 agents x 3 rounds, 3 repetitions
    python bench/network_round.py --agents 10000 --rounds 1 --repetitions 2 \
        --rss-rounds 0 --no-theory                     # the field's scale (docs/benchmarks.md)
    python bench/network_round.py --agents 100 --rounds 1 --repetitions 1 --rss-rounds 0  # quick
    python bench/network_round.py --latency 0.2 --repetitions 5
    python bench/network_round.py --profile 30         # + one CLI run under cProfile, top 30

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import grid_cli  # noqa: E402  (bench/grid_cli.py: the floor script and the profile's areas)
import network_theory  # noqa: E402

EXPERIMENT = ROOT / "prompts" / "experiments" / "llm_sam_network.yaml"
SYNTHETIC = ROOT / "prompts" / "network" / "agents_synthetic.csv"
MODEL = grid_cli.MODEL
USER = grid_cli.USER
REPLY = json.dumps({"Thought": "ok", "Opinion": 6, "Decision": "Yes"})
TARGET = 1.2
FLAT_SHARE, FLAT_MB = 0.10, 15.0  # flat: the long run's peak within 10% or 15 MB of the short's
RSS_SHORT = 5  # rounds of the run the `--rss-rounds` run is compared with


# -- inputs ---------------------------------------------------------------------------------------


def agents_csv(n: int, path: Path) -> Path:
    """`n` agents: the synthetic table's rows repeated, named Ada0, Ben0, ..., Ada1, ..., with
    each copy's opinion nudged (by -0.1, 0, +0.1, kept in [0, 1])."""
    with SYNTHETIC.open(encoding="utf-8-sig", newline="") as f:
        base = list(csv.DictReader(f))
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(base[0]))
        writer.writeheader()
        for i in range(n):
            copy, row = divmod(i, len(base))
            row = dict(base[row], name=f"{base[row]['name']}{copy}")
            nudged = float(row["O_initial"]) + ((copy % 3) - 1) * 0.1
            row["O_initial"] = f"{min(1.0, max(0.0, nudged)):.1f}"
            writer.writerow(row)
    return path


def experiment_yaml(n: int, tmp: Path) -> Path:
    """The shipped network experiment on a graph of `n` nodes and a table of `n` agents."""
    doc = yaml.safe_load(EXPERIMENT.read_text(encoding="utf-8"))
    doc["name"] = f"network round bench, {n} agents"
    doc["network"]["graph"] = {"type": "barabasi_albert", "n": n, "m": 5, "seed": 1}
    doc["network"]["agents"] = str(agents_csv(n, tmp / f"agents-{n}.csv"))
    path = tmp / f"network-{n}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


# -- timing processes (bench/grid_cli.py's spawner: each process's own wall, CPU and peak RSS) --

Run = grid_cli.Run
timed = grid_cli.timed


# -- the CLI side ---------------------------------------------------------------------------------


def fresh_store(db: Path, experiment: Path, env: dict[str, str]) -> tuple[str, float, float]:
    """Import the experiment into a new store with the CLI: (its id, the import process's wall
    seconds and peak RSS MB). The import builds the graph and reads the agents table."""
    command = [sys.executable, "main.py", "experiment", "import", str(experiment), "--json"]
    wall, _, rss, out = timed(command, {**env, "SIM_DB": str(db)})
    return json.loads(out)["id"], wall, rss


def cli_command(exp: str, rounds: int, concurrency: int) -> list[str]:
    return [
        "run",
        exp,
        "--llm",
        f"openai:{MODEL}",
        "--rounds",
        str(rounds),
        "--seed",
        "1",
        "--pool",
        f"openai={concurrency}",
        "--json",
    ]


def ledger(db: Path, run_id: str) -> tuple[float, list[list[dict]], dict]:
    """(the run's span in seconds, the request bodies of its calls round by round, counters)."""
    from simulator.domain.params import GenerationParams
    from simulator.llm.openai_backend import OpenAIBackend
    from simulator.store.store import open_store_uri
    from simulator.worlds.network.domain.experiment import ANSWER_PURPOSES

    store = open_store_uri(str(db))
    try:
        doc = store.conversations.get(run_id)
        calls = sorted(store.calls.for_conversation(run_id), key=lambda c: c["seq"])
        if doc["status"] != "done" or any(c["state"] != "done" for c in calls):
            raise RuntimeError(f"run {run_id} is {doc['status']}; not every call is done")
        span = (doc["finished_at"] - min(c["created_at"] for c in calls)).total_seconds()
        shaper = OpenAIBackend(MODEL, base_url="http://127.0.0.1:1/v1", api_key="sk-bench")
        waves: dict[tuple[int, int], list[dict]] = {}
        for c in calls:
            params = GenerationParams.model_validate(c.get("params") or {})
            body = shaper.request_body(store.calls.prompt(c["prompt_hash"]), params)
            key = (c["day"], ANSWER_PURPOSES.index(c["purpose"]))
            waves.setdefault(key, []).append(body)
        return span, [waves[k] for k in sorted(waves)], dict(doc.get("counters") or {})
    finally:
        store.close()


class Bench:
    """The stub, the environment and the commands shared by every run of one bench."""

    def __init__(self, args: argparse.Namespace, stub, tmp: Path) -> None:
        self.args, self.stub, self.tmp = args, stub, tmp
        base_url = stub.openai_base_url
        env = dict(os.environ, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-bench-dummy")
        env["SIM_USER"] = USER
        for name in ("SIM_DB_NAME", "SIM_LLM_TIMEOUT"):
            env.pop(name, None)
        self.env = env
        self.experiment = experiment_yaml(args.agents, tmp)
        self.waves_file = tmp / "waves.json"
        self.commands = grid_cli.floor_commands(self.waves_file, base_url, args.concurrency)
        self.stores = 0
        self.imports: list[tuple[float, float]] = []  # (wall s, peak RSS MB) of each import

    def store(self) -> tuple[Path, str]:
        """A new store folder with the experiment imported: (folder, experiment id)."""
        self.stores += 1
        db = self.tmp / f"db{self.stores}"
        exp, wall, rss = fresh_store(db, self.experiment, self.env)
        self.imports.append((wall, rss))
        return db, exp

    def cli(self, rounds: int, prefix: tuple[str, ...] = ()) -> tuple[Run, list[list[dict]], dict]:
        """One `llm-sim run` of `rounds` rounds, checked: every call made and done."""
        db, exp = self.store()
        self.stub.reset()
        command = [sys.executable, *prefix, "main.py", *cli_command(exp, rounds, self.concurrency)]
        wall, cpu, rss, out = timed(command, {**self.env, "SIM_DB": str(db)})
        result = json.loads(out)
        span, waves, counters = ledger(db, result["conversation_id"])
        calls, expected = sum(len(w) for w in waves), self.args.agents * rounds
        if result["status"] != "done" or calls != expected or counters.get("calls") != expected:
            raise RuntimeError(
                f"the CLI run is {result['status']} with {calls} calls (counters {counters}), "
                f"not {expected}"
            )
        return Run(wall, cpu, rss, span, self.stub.max_in_flight, calls), waves, counters

    def side(self, side: str) -> Run:
        """One run of `side`: the CLI, or a floor process sending the warm-up run's bodies."""
        if side == "cli":
            return self.cli(self.args.rounds)[0]
        self.stub.reset()
        wall, cpu, rss, out = timed(self.commands[side], self.env)
        got = json.loads(out)
        expected = self.args.agents * self.args.rounds
        if got["replies"] != expected:
            raise RuntimeError(f"{side} got {got['replies']} replies, not {expected}")
        return Run(wall, cpu, rss, got["span_s"], self.stub.max_in_flight, got["replies"])

    @property
    def concurrency(self) -> int:
        return self.args.concurrency


def graph_build_s(agents: int) -> float:
    """Seconds to build the bench's graph in this process (the best of three): the part of
    the import and of the run's setup that grows with the network."""
    from simulator.worlds.network.domain.graphs import build_graphs

    spec = {"type": "barabasi_albert", "n": agents, "m": 5, "seed": 1}
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        build_graphs(spec)
        best = min(best, time.perf_counter() - start)
    return best


def measure(bench: Bench) -> tuple[dict[str, list[Run]], dict, tuple]:
    """Warm up, then the interleaved repetitions: (runs per side, warm-up counters, load)."""
    args = bench.args
    load_before = os.getloadavg()
    _, waves, counters = bench.cli(args.rounds)  # warms caches and collects the bodies
    bench.waves_file.write_text(json.dumps(waves))
    bench.side("lean")
    sizes = sorted({len(w) for w in waves})
    print(f"warm-up done: {len(waves)} rounds of {sizes} calls", flush=True)
    runs = grid_cli.interleaved(args.repetitions, bench.side, "repetition")
    return runs, counters, (load_before, os.getloadavg())


def report(bench: Bench, runs: dict[str, list[Run]], counters: dict, load: tuple) -> list[str]:
    """Print the speed figures; return the summary lines."""
    args = bench.args
    calls = args.agents * args.rounds
    print(
        f"\nNetwork via the real CLI process: {args.agents:,} agents (Barabasi-Albert m = 5) x "
        f"{args.rounds} rounds = {calls:,} calls in {args.rounds} rounds, stub latency "
        f"{args.latency * 1000:g} ms (threads of the bench process), {os.cpu_count()} CPUs, "
        f"{args.repetitions} interleaved repetition(s); whole processes, start-up included"
    )
    print(
        f"  concurrency: `--pool openai={args.concurrency}` for the CLI; both floors' semaphore "
        "is the same size"
    )
    print(
        f"  load average before {load[0][0]:.2f}, after {load[1][0]:.2f} "
        "(other processes on this machine share its CPUs)"
    )
    grid_cli.print_sides(runs, calls, "repetition")
    per_round = -(-args.agents // args.concurrency)
    theory = args.rounds * per_round * args.latency
    print(
        f"  theory: rounds x ceil(agents / concurrency) x latency = {args.rounds} x {per_round} x "
        f"{args.latency * 1000:g} ms = {theory:.2f} s (orientation only)"
    )
    head, beside = grid_cli.ratio_lines(runs, TARGET)
    print(f"  {head}\n  {beside}")
    build = graph_build_s(args.agents)
    walls = [w for w, _ in bench.imports]
    rss = max(r for _, r in bench.imports)
    setup = (
        f"graph (Barabasi-Albert, {args.agents:,} nodes, m = 5) built in {build:.2f} s; "
        f"`experiment import` (graph and agents table) {statistics.median(walls):.2f} s wall, "
        f"peak RSS {rss:.0f} MB (median of {len(walls)} imports)"
    )
    print(f"  {setup}")
    print(f"  the warm-up run's counters: {json.dumps(counters)}")
    inflight = sorted({x.max_in_flight for rows in runs.values() for x in rows})
    return [
        f"network {args.agents:,} agents x {args.rounds} rounds = {calls:,} calls at "
        f"{args.latency * 1000:g} ms, pool {args.concurrency}, stub max_in_flight {inflight}, "
        f"load {load[0][0]:.2f}..{load[1][0]:.2f}",
        f"CLI {grid_cli.median(runs, 'cli', 'wall_s'):.2f} s, lean call "
        f"{grid_cli.median(runs, 'lean', 'wall_s'):.2f} s, create() "
        f"{grid_cli.median(runs, 'create', 'wall_s'):.2f} s (medians of {args.repetitions}); "
        f"theory {theory:.2f} s; CLI peak RSS {grid_cli.median(runs, 'cli', 'rss_mb'):.0f} MB",
        head,
        beside,
        setup,
    ]


# -- memory ---------------------------------------------------------------------------------------


def memory(bench: Bench) -> list[str]:
    """Peak RSS of a short and a long CLI run; return the summary lines."""
    long = bench.args.rss_rounds
    short = RSS_SHORT if long > RSS_SHORT else max(1, long // 2)
    print(f"\nMemory: CLI runs of {short} and {long} rounds ({bench.args.agents:,} agents)")
    got = []
    for rounds in (short, long):
        run = bench.cli(rounds)[0]
        got.append(run)
        print(
            f"  {rounds:3d} rounds ({run.calls:,} calls): peak RSS {run.rss_mb:7.1f} MB, wall "
            f"{run.wall_s:6.2f} s, CPU {run.cpu_s:6.2f} s, stub max_in_flight {run.max_in_flight}",
            flush=True,
        )
    grew = got[1].rss_mb - got[0].rss_mb
    flat = grew <= max(FLAT_MB, FLAT_SHARE * got[0].rss_mb)
    verdict = "flat" if flat else "GROWS"
    line = (
        f"peak RSS {got[0].rss_mb:.1f} MB at {short} rounds, {got[1].rss_mb:.1f} MB at "
        f"{long} rounds: {grew:+.1f} MB, {verdict} "
        f"(flat: within {FLAT_SHARE:.0%} or {FLAT_MB:g} MB)"
    )
    print(f"  {line}")
    return [line]


# -- profile --------------------------------------------------------------------------------------


def profile_once(bench: Bench) -> None:
    """One more CLI run under cProfile (wall inflated by the profiler); prints the top N."""
    args = bench.args
    out = bench.tmp / "cli.prof"
    run = bench.cli(args.rounds, ("-m", "cProfile", "-o", str(out)))[0]
    stats = pstats.Stats(str(out))
    totals: dict[str, float] = {}
    for func, (_, _, tottime, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        area = grid_cli.area_of(func)
        if func[0] != "~" or area != "other" or not callers:
            totals[area] = totals.get(area, 0.0) + tottime
            continue
        for caller, (_, _, caller_tt, _) in callers.items():  # a builtin: its callers' areas
            where = grid_cli.area_of(caller)
            totals[where] = totals.get(where, 0.0) + caller_tt
    calls = args.agents * args.rounds
    print(f"\nOne more CLI run under cProfile (wall {run.wall_s:.2f} s, profiled), own time:")
    for area, secs in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {area:40s} {secs:7.2f} s {secs * 1000 / calls:7.3f} ms/call")
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(str(out), stream=buf).sort_stats(order).print_stats(args.profile)
        print(f"\nTop {args.profile} by {order}:")
        print("\n".join(line for line in buf.getvalue().splitlines()[6:] if line.strip()))


# -- entry ----------------------------------------------------------------------------------------


def theory_line(agents: int) -> None:
    """bench/network_theory.py's target line for the same number of agents (no LLM)."""
    print(f"\nThe no-LLM theory (bench/network_theory.py --agents {agents} --rounds 0):")
    network_theory.main(["--agents", str(agents), "--rounds", "0", "--repeat", "3"])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=1000, help="graph nodes and table rows")
    p.add_argument("--rounds", type=int, default=3, help="rounds after round 0 in a timed run")
    p.add_argument("--repetitions", type=int, default=3, help="interleaved CLI/floor pairs")
    p.add_argument("--latency", type=float, default=0.05, help="stub seconds per call")
    p.add_argument("--concurrency", type=int, default=64, help="--pool openai=N and the floor's")
    p.add_argument(
        "--rss-rounds", type=int, default=20, metavar="N", help="memory run's rounds (0: skip)"
    )
    p.add_argument("--no-theory", action="store_true", help="skip the theory's timing line")
    p.add_argument("--profile", type=int, default=0, metavar="N")
    args = p.parse_args(argv)
    from simulator.testing.llm_stub_server import StubLLMServer

    summary: list[str] = []
    with (
        tempfile.TemporaryDirectory(prefix="sim-network-bench-") as tmp,
        StubLLMServer(latency_s=args.latency, models=[MODEL]) as stub,
    ):
        stub.reply_fn = lambda body: REPLY
        bench = Bench(args, stub, Path(tmp))
        runs, counters, load = measure(bench)
        summary += report(bench, runs, counters, load)
        if args.rss_rounds:
            summary += memory(bench)
        if args.profile:
            profile_once(bench)
    if not args.no_theory:
        theory_line(args.agents)
    print("\nSummary")
    for line in summary:
        print(f"  {line}")


if __name__ == "__main__":
    main()
