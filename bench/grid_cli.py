"""A grid run as a user runs it: the real `llm-sim run` process against the bare client.

The speed target: every actor of a step is sent at once. The shipped 2D community
(`prompts/experiments/takata_grid.yaml`) is imported into a fresh store (a temp SIM_DB folder,
not timed) for every round, then run by the real CLI process, started as a user starts it:

    python main.py run EXP --llm openai:stub --agents 100 --steps 10 --seed 1 --json

against the loopback OpenAI-protocol stub (`--latency` seconds per call, served on threads of
this otherwise idle process, so its `max_in_flight` can be read: the concurrency really reached).
Each step sends its 100 message calls together, then 100 memory calls, then 100 move calls:
100 x 10 x 3 = 3,000 calls in 30 waves. `llm-sim run` has no --pool flag and no SIM_* setting
for it, so the openai endpoint pool keeps the provider's default size (16, read here from
`PoolRegistry`), and that bounds how many calls are in flight.

In the same run, interleaved with it (order alternating per round), two floors: processes
that send exactly the request bodies the CLI sent (read back from the store's call ledger of a
warm-up run), wave by wave, each wave waiting for the one before as the stages do, at the same
concurrency (an asyncio.Semaphore of the pool's size), through `openai.AsyncOpenAI`: the lean
call the tool's OpenAI backend makes (`client.post` of the body, the reply read as JSON), the
headline's floor, and the package's `chat.completions.create`, whose request transform and
response models cost more than the tool's own call (its ratio is printed beside). All sides are
whole processes, start-up included (wall from start to exit, CPU and peak RSS from wait4, read
by a small spawner process); the CLI's own span (first call's created_at to the run's
finished_at, from the store) and the floors' span (first wave sent to last reply) are printed
too.

Target: median wall(CLI) / wall(lean call) <= 1.2, peak RSS under 1 GB at 1,000 agents.

The stub answers every move prompt with one of the five commands (`stub_reply`: a mix chosen
by a hash of the prompt), so agents really move and the parser reads every reply; from the
warm-up run's stored steps the bench prints how many move replies parsed (and the
`move_fallbacks` counter: 0 when the parser accepted every move) and how many agents changed
cell. Other prompts get the stub's echo of the prompt's start.

`--hf` adds the HF part: a tiny randomly initialised Llama (tests/llm/tiny_models.py) built in a
temp dir, and a small grid (`--hf-agents` x `--hf-steps`, `--hf-max-tokens` new tokens) run
through the services (grid_runs.build_spec, runs.create_run, grid_runs.run with `hf:TEMP_DIR`),
once seeded and once not; it prints the batch sizes the hf backend's DynamicBatcher reached
({size: generate calls}).
On a GPU that is the throughput check; on a CPU it shows only whether a stage is batched.

    python bench/grid_cli.py                          # 3 rounds, 100 agents x 10 steps, 50 ms
    python bench/grid_cli.py --agents 1000 --steps 1 --rounds 3        # the field's scale
    python bench/grid_cli.py --rounds 5
    python bench/grid_cli.py --agents 20 --steps 2 --rounds 1          # quick
    python bench/grid_cli.py --hf                      # + the HF batch sizes
    python bench/grid_cli.py --profile 30              # + one CLI run under cProfile, top 30

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "prompts" / "experiments" / "takata_grid.yaml"
MODEL = "stub"
TARGET = 1.2  # the CLI's wall over the lean call's
USER = "bench"
STAGES = ("grid_message", "grid_memory", "grid_move")
# chat.completions.create keyword arguments; the rest of a body goes in extra_body
STANDARD_KEYS = frozenset(
    {"model", "messages", "temperature", "top_p", "seed", "stop", "max_tokens"}
)


MOVE_REPLIES = ("I choose x+1.", "x-1", "Let me go y+1", "y-1 it is", "stay")


def stub_reply(body: dict) -> str:
    """The stub's answer: a move the parser accepts for a move prompt (the five commands
    mixed by a hash of the prompt, so positions spread), else the start of the prompt."""
    prompt = str((body.get("messages") or [{}])[-1].get("content", ""))
    if "Choose your next move" in prompt:
        return MOVE_REPLIES[zlib.crc32(prompt.encode()) % len(MOVE_REPLIES)]
    return "Reply to: " + " ".join(prompt.split())[:50]


# -- the floor process (kept free of simulator imports: it is a bare openai script) -------------


async def send_waves(
    base_url: str, waves: list[list[dict]], concurrency: int, lean: bool
) -> tuple[int, float]:
    """Send each wave's bodies at once (at most `concurrency` in flight), one wave after the
    other; return (replies, seconds from the first call sent to the last reply)."""
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0, timeout=120.0)
    gate = asyncio.Semaphore(concurrency)
    replies = 0

    async def one(body: dict) -> None:
        nonlocal replies
        async with gate:
            if lean:
                raw = await client.post("/chat/completions", cast_to=bytes, body=body)
                assert json.loads(raw)["choices"][0]["message"]["content"] is not None
            else:
                kw = {k: v for k, v in body.items() if k in STANDARD_KEYS}
                extra = {k: v for k, v in body.items() if k not in STANDARD_KEYS}
                resp = await client.chat.completions.create(**kw, extra_body=extra or None)
                assert resp.choices[0].message.content is not None
        replies += 1

    start = time.perf_counter()
    try:
        for wave in waves:
            await asyncio.gather(*(one(body) for body in wave))
    finally:
        span = time.perf_counter() - start
        await client.close()
    return replies, span


def bare_main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description="the floor: waves of calls through the bare client")
    p.add_argument("--bare", required=True, metavar="WAVES_JSON")
    p.add_argument("--base-url", required=True)
    p.add_argument("--concurrency", type=int, required=True)
    p.add_argument("--lean", action="store_true")
    args = p.parse_args(argv)
    waves = json.loads(Path(args.bare).read_text(encoding="utf-8"))
    replies, span = asyncio.run(send_waves(args.base_url, waves, args.concurrency, args.lean))
    print(json.dumps({"replies": replies, "span_s": span}))


# -- timing processes ---------------------------------------------------------------------------


@dataclass
class Run:
    wall_s: float  # process start to exit
    cpu_s: float  # the process's user + system CPU (wait4)
    rss_mb: float  # the process's peak resident set (wait4's ru_maxrss, see SPAWNER)
    span_s: float  # the run's own span (CLI: ledger; floor: first call to last reply)
    max_in_flight: int  # the stub's most concurrent chat requests during the run
    calls: int


# Linux keeps a process's peak RSS across exec, and a child forked (or vforked, as subprocess
# does) from this bench starts at the bench's own peak, so wait4 here would report at least that
# for every child. The children are therefore started by a small spawner process (python -S,
# about 10 MB): it forks, execs the command, and reports the child's wall, CPU and peak RSS.
SPAWNER = """
import json, os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
cpu, rss_kib = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
with open(report, "w") as f:
    json.dump({"wall_s": wall, "cpu_s": cpu, "rss_mb": rss_kib / 1024}, f)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """Run a process to its end through the spawner: (wall seconds from fork to exit, CPU
    seconds, peak RSS MB, stdout), all three figures the process's own (wait4)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        report = Path(f.name)
    try:
        spawn = [sys.executable, "-S", "-c", SPAWNER, str(report), *command]
        proc = subprocess.run(spawn, env=env, cwd=ROOT, capture_output=True)
        if proc.returncode != 0:
            tail = proc.stderr.decode()[-800:]
            raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: {tail}")
        got = json.loads(report.read_text())
    finally:
        report.unlink(missing_ok=True)
    return got["wall_s"], got["cpu_s"], got["rss_mb"], proc.stdout.decode()


# -- the CLI side ---------------------------------------------------------------------------------


def fresh_store(db: Path) -> str:
    """Import the shipped grid experiment into a new embedded store; return its id."""
    from simulator.services import experiments
    from simulator.store.store import open_store_uri

    store = open_store_uri(str(db))
    try:
        return experiments.import_yaml(store, EXPERIMENT, USER).id
    finally:
        store.close()


def cli_command(exp: str, args: argparse.Namespace) -> list[str]:
    return [
        "run",
        exp,
        "--llm",
        f"openai:{MODEL}",
        "--agents",
        str(args.agents),
        "--steps",
        str(args.steps),
        "--seed",
        "1",
        "--json",
    ]


def ledger(db: Path, run_id: str) -> tuple[float, list[list[dict]], dict, dict]:
    """(the run's span in seconds, the request bodies of its calls in waves, its counters, its
    moves: {"moves", "parsed", "moved"} read from the stored step rows)."""
    from simulator.domain.params import GenerationParams
    from simulator.llm.openai_backend import OpenAIBackend
    from simulator.store.store import open_store_uri

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
            waves.setdefault((c["day"], STAGES.index(c["purpose"])), []).append(body)
        rows = store.rows("grid_steps").for_run(run_id)
        moves = {
            "moves": len(rows),
            "parsed": sum(not r["move_fallback"] for r in rows),
            "moved": sum(r["position_after"] != r["position_before"] for r in rows),
        }
        counters = dict(doc.get("counters") or {})
        return span, [waves[k] for k in sorted(waves)], counters, moves
    finally:
        store.close()


SIDES = {  # the CLI and its two floors, as the tables name them
    "cli": "llm-sim run (python main.py run)",
    "lean": "floor: lean call (client.post)",
    "create": "bare chat.completions.create",
}


def floor_commands(waves_file: Path, base_url: str, concurrency: int) -> dict[str, list[str]]:
    """The two floor processes: the lean call the tool's OpenAI backend makes (the headline's
    floor) and the openai package's chat.completions.create (its request transform and
    response models cost more than the tool's own call)."""
    floor = [sys.executable, str(Path(__file__).resolve()), "--bare", str(waves_file)]
    floor += ["--base-url", base_url, "--concurrency", str(concurrency)]
    return {"lean": [*floor, "--lean"], "create": floor}


def interleaved(rounds: int, run_side, label: str = "round") -> dict[str, list[Run]]:
    """`rounds` repetitions of every side, the order alternating, so a load change on this
    shared machine falls on all of them alike."""
    runs: dict[str, list[Run]] = {side: [] for side in SIDES}
    for r in range(1, rounds + 1):
        order = ("cli", "lean", "create") if r % 2 else ("create", "lean", "cli")
        for side in order:
            runs[side].append(run_side(side))
        walls = "  ".join(f"{side} {runs[side][-1].wall_s:.2f} s" for side in SIDES)
        print(f"{label} {r}: {walls}", flush=True)
    return runs


def median(runs: dict[str, list[Run]], side: str, key: str) -> float:
    return statistics.median(getattr(x, key) for x in runs[side])


def ratio(runs: dict[str, list[Run]], side: str, key: str = "wall_s") -> float:
    """The CLI's median over `side`'s median."""
    return median(runs, "cli", key) / median(runs, side, key)


def print_sides(runs: dict[str, list[Run]], calls: int, per: str = "round") -> None:
    """One line of medians per side and its repetitions."""
    for side, name in SIDES.items():
        rows = runs[side]
        walls = ", ".join(f"{x.wall_s:.2f}" for x in rows)
        spans = ", ".join(f"{x.span_s:.2f}" for x in rows)
        inflight = ", ".join(str(x.max_in_flight) for x in rows)
        cpu = median(runs, side, "cpu_s")
        print(
            f"  {name:36s} wall {median(runs, side, 'wall_s'):6.2f} s  span "
            f"{median(runs, side, 'span_s'):6.2f} s  CPU {cpu:6.2f} s ({cpu * 1000 / calls:5.2f}"
            f" ms/call)  peak RSS {median(runs, side, 'rss_mb'):6.1f} MB"
        )
        print(f"    per {per}: wall ({walls})  span ({spans})  stub max_in_flight ({inflight})")


def ratio_lines(runs: dict[str, list[Run]], target: float) -> tuple[str, str]:
    """(the headline: CLI over the lean call, with the target's verdict; the create() ratio)."""
    verdict = "OK" if ratio(runs, "lean") <= target else "MISSED"
    head = (
        f"ratio CLI / lean call: wall {ratio(runs, 'lean'):.2f} (target <= {target} {verdict}), "
        f"span {ratio(runs, 'lean', 'span_s'):.2f} (start-up left out), CPU "
        f"{ratio(runs, 'lean', 'cpu_s'):.2f}"
    )
    beside = (
        f"ratio CLI / chat.completions.create: wall {ratio(runs, 'create'):.2f}, span "
        f"{ratio(runs, 'create', 'span_s'):.2f}, CPU {ratio(runs, 'create', 'cpu_s'):.2f}"
    )
    return head, beside


def measure(args: argparse.Namespace, stub, tmp: Path) -> list[str]:
    """Warm up, run the interleaved rounds, print the figures; return the summary lines."""
    from simulator.llm.retry import PoolRegistry

    base_url = stub.openai_base_url
    concurrency = PoolRegistry().size_for(f"openai:{base_url}")
    env = dict(os.environ, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-bench-dummy")
    env["SIM_USER"] = USER
    for name in ("SIM_DB_NAME", "SIM_LLM_TIMEOUT"):
        env.pop(name, None)
    waves_file = tmp / "waves.json"
    commands = floor_commands(waves_file, base_url, concurrency)
    expected = args.agents * args.steps * len(STAGES)
    stores = iter(range(10**6))

    def run_cli() -> tuple[Run, list[list[dict]], dict, dict]:
        db = tmp / f"db{next(stores)}"
        exp = fresh_store(db)
        stub.reset()
        command = [sys.executable, "main.py", *cli_command(exp, args)]
        wall, cpu, rss, out = timed(command, {**env, "SIM_DB": str(db)})
        result = json.loads(out)
        span, waves, counters, moves = ledger(db, result["conversation_id"])
        calls = sum(len(w) for w in waves)
        if calls != expected or counters.get("calls") != expected:
            raise RuntimeError(f"the CLI made {calls} calls (counters {counters}), not {expected}")
        return Run(wall, cpu, rss, span, stub.max_in_flight, calls), waves, counters, moves

    def run_side(side: str) -> Run:
        if side == "cli":
            return run_cli()[0]
        stub.reset()
        wall, cpu, rss, out = timed(commands[side], env)
        got = json.loads(out)
        if got["replies"] != expected:
            raise RuntimeError(f"{side} got {got['replies']} replies, not {expected}")
        return Run(wall, cpu, rss, got["span_s"], stub.max_in_flight, got["replies"])

    load_before = os.getloadavg()
    _, waves, counters, moves = run_cli()  # warms caches and collects the bodies
    waves_file.write_text(json.dumps(waves))
    run_side("lean")
    print(
        f"warm-up done: {len(waves)} waves of {sorted({len(w) for w in waves})} calls", flush=True
    )
    runs = interleaved(args.rounds, run_side)
    load = (load_before, os.getloadavg())
    summary = report(args, concurrency, len(waves), runs, counters, moves, load)
    if args.profile:
        profile_once(args, env, tmp)
    return summary


def report(
    args: argparse.Namespace,
    concurrency: int,
    waves: int,
    runs: dict[str, list[Run]],
    counters: dict,
    moves: dict,
    load: tuple[tuple[float, ...], tuple[float, ...]],
) -> list[str]:
    calls = args.agents * args.steps * len(STAGES)
    print(
        f"\nGrid via the real CLI process: {args.agents:,} agents x {args.steps} steps x 3 stages "
        f"= {calls:,} calls in {waves} waves, stub latency {args.latency * 1000:g} ms (threads "
        f"of the bench process), {os.cpu_count()} CPUs, {args.rounds} interleaved round(s); "
        "whole processes, start-up included"
    )
    print(
        f"  concurrency: the openai endpoint pool of `llm-sim run` = {concurrency} (provider "
        "default; `run` has no --pool flag or SIM_* setting); both floors use the same bound"
    )
    print(
        f"  load average before {load[0][0]:.2f}, after {load[1][0]:.2f} "
        "(other processes on this machine share its CPUs)"
    )
    print_sides(runs, calls)
    per_wave = -(-args.agents // concurrency)
    theory = waves * per_wave * args.latency
    print(
        f"  theory: waves x ceil(agents / concurrency) x latency = {waves} x {per_wave} x "
        f"{args.latency * 1000:g} ms = {theory:.2f} s (orientation only)"
    )
    head, beside = ratio_lines(runs, TARGET)
    print(f"  {head}\n  {beside}")
    print(f"  the warm-up run's counters: {json.dumps(counters)}")
    moved = (
        f"moves parsed {moves['parsed']:,} of {moves['moves']:,} (fallbacks "
        f"{counters.get('move_fallbacks')}); agents that changed cell {moves['moved']:,}"
    )
    print(f"  the warm-up run's {moved}")
    inflight = sorted({x.max_in_flight for rows in runs.values() for x in rows})
    return [
        f"grid {args.agents:,} x {args.steps} = {calls:,} calls at {args.latency * 1000:g} ms, "
        f"concurrency {concurrency}, stub max_in_flight {inflight}, load "
        f"{load[0][0]:.2f}..{load[1][0]:.2f}",
        f"CLI {median(runs, 'cli', 'wall_s'):.2f} s, lean call "
        f"{median(runs, 'lean', 'wall_s'):.2f} s, create() {median(runs, 'create', 'wall_s'):.2f}"
        f" s (medians of {args.rounds}); theory {theory:.2f} s; CLI peak RSS "
        f"{median(runs, 'cli', 'rss_mb'):.0f} MB",
        head,
        beside,
        f"warm-up run: {moved}",
    ]


def profile_once(args: argparse.Namespace, env: dict, tmp: Path) -> None:
    """One more CLI run under cProfile (wall inflated by the profiler); prints the top N."""
    db = tmp / "db-profiled"
    exp = fresh_store(db)
    out = tmp / "cli.prof"
    command = [sys.executable, "-m", "cProfile", "-o", str(out), "main.py"]
    wall, _, _, _ = timed([*command, *cli_command(exp, args)], {**env, "SIM_DB": str(db)})
    stats = pstats.Stats(str(out))
    totals: dict[str, float] = {}
    for func, (_, _, tottime, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if func[0] != "~" or area_of(func) != "other" or not callers:
            totals[area_of(func)] = totals.get(area_of(func), 0.0) + tottime
            continue
        for caller, (_, _, caller_tt, _) in callers.items():  # a builtin: its callers' areas
            totals[area_of(caller)] = totals.get(area_of(caller), 0.0) + caller_tt
    calls = args.agents * args.steps * len(STAGES)
    print(f"\nOne more CLI run under cProfile (wall {wall:.2f} s with the profiler), own time:")
    for area, secs in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {area:40s} {secs:7.2f} s {secs * 1000 / calls:7.3f} ms/call")
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(str(out), stream=buf).sort_stats(order).print_stats(args.profile)
        print(f"\nTop {args.profile} by {order}:")
        print("\n".join(line for line in buf.getvalue().splitlines()[6:] if line.strip()))


AREAS = (  # (label, a piece of "file:function"), first match wins
    ("idle: waiting in epoll", "method 'poll' of 'select.epoll'"),
    ("store (litemongo, sqlite, bson)", "litemongo"),
    ("store (litemongo, sqlite, bson)", "sqlite3"),
    ("store (litemongo, sqlite, bson)", "bson"),
    ("store (litemongo, sqlite, bson)", "simulator/store/"),
    ("store: copy.deepcopy (mongomock)", "copy.py"),
    ("HTTP (openai, httpx, httpcore, h11, anyio)", "openai/"),
    ("HTTP (openai, httpx, httpcore, h11, anyio)", "httpx"),
    ("HTTP (openai, httpx, httpcore, h11, anyio)", "httpcore"),
    ("HTTP (openai, httpx, httpcore, h11, anyio)", "h11"),
    ("HTTP (openai, httpx, httpcore, h11, anyio)", "anyio"),
    ("HTTP (openai, httpx, httpcore, h11, anyio)", "sniffio"),
    ("socket send/recv/connect", "_socket.socket"),
    ("asyncio / selectors", "asyncio"),
    ("asyncio / selectors", "selectors"),
    ("retries (tenacity)", "tenacity"),
    ("pydantic", "pydantic"),
    ("simulator.engine", "simulator/engine/"),
    ("simulator.llm", "simulator/llm/"),
    ("simulator (other)", "simulator/"),
    ("HTTP (openai, httpx, httpcore, h11, anyio)", "_ssl."),
    ("imports (start-up)", "<frozen importlib"),
    ("imports (start-up)", "marshal.loads"),
    ("imports (start-up)", "builtins.exec"),
    ("imports (start-up)", "builtins.compile"),
    ("imports (start-up)", "__build_class__"),
    ("json", "json"),
)


def area_of(func: tuple[str, int, str]) -> str:
    key = f"{func[0]}:{func[2]}"
    return next((label for label, needle in AREAS if needle in key), "other")


# -- the HF part ----------------------------------------------------------------------------------


def hf_part(args: argparse.Namespace, tmp: Path) -> list[str]:
    """Run a small grid on a tiny random model through the services; return summary lines."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        line = f"HF part skipped: {exc.name or exc} is not installed (pip install -e '.[hf]')"
        print(f"\n{line}")
        return [line]
    spec = importlib.util.spec_from_file_location("tiny_models", ROOT / "tests/llm/tiny_models.py")
    assert spec and spec.loader
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model_dir = tiny.build_tiny_model(tmp / "tiny-model")
    print(f"\nHF part: tiny random Llama in {model_dir}")
    lines = []
    for seed in (1, None):  # seeded as the CLI run above, then without a seed
        full, short = asyncio.run(hf_grid(args, model_dir, tmp / f"hf-db-{seed}", seed))
        print(f"  {full}", flush=True)
        lines.append(short)
    return lines


async def hf_grid(
    args: argparse.Namespace, model_dir: Path, db: Path, seed: int | None
) -> tuple[str, str]:
    """One small grid run on the hf backend: (a full line, a summary line)."""
    from simulator.domain.params import GenerationParams
    from simulator.llm.access import LLMAccess
    from simulator.services import experiments
    from simulator.services import runs as run_service
    from simulator.store.store import open_store_uri
    from simulator.worlds.grid.services import runs as grid_runs

    store = open_store_uri(str(db))
    llms = LLMAccess()
    try:
        view = experiments.import_yaml(store, EXPERIMENT, USER)
        world = {"agents": args.hf_agents, "steps": args.hf_steps}
        spec = grid_runs.build_spec(view, llm=f"hf:{model_dir}", seed=seed, world=world)
        params = spec.llm.params.merge(GenerationParams(max_tokens=args.hf_max_tokens))
        spec = spec.model_copy(update={"llm": spec.llm.model_copy(update={"params": params})})
        doc = run_service.create_run(store, view, spec, USER)
        backend = llms.get(spec.llm)
        start = time.perf_counter()
        outcome = await grid_runs.run(store, doc["_id"], llms)
        wall = time.perf_counter() - start
        batcher = backend.backend.batcher
        sizes = dict(sorted(batcher.batch_sizes.items()))
        device = getattr(backend.backend, "device", "?")
        pool = backend.pool.size
    finally:
        await llms.aclose()
        store.close()
    calls = args.hf_agents * args.hf_steps * len(STAGES)
    short = (
        f"HF grid {args.hf_agents} x {args.hf_steps}, seed {seed}: batch sizes {sizes} "
        f"({batcher.generate_calls} generate calls for {calls} calls; a stage is "
        f"{args.hf_agents} calls)"
    )
    full = (
        f"seed {seed}: {args.hf_agents} agents x {args.hf_steps} steps = {calls} calls, "
        f"{outcome.status}, {wall:.2f} s on {device} (model load included), pool {pool}, "
        f"max_batch_size {batcher.max_batch_size}; batch sizes {{size: generate calls}} {sizes}, "
        f"{batcher.generate_calls} generate calls, largest {batcher.largest_batch}"
    )
    return full, short


# -- entry ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--bare" in argv:
        bare_main(argv)
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=100)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--latency", type=float, default=0.05, help="stub seconds per call")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--profile", type=int, default=0, metavar="N")
    p.add_argument("--hf", action="store_true", help="also report the HF batcher's batch sizes")
    p.add_argument("--hf-agents", type=int, default=16)
    p.add_argument("--hf-steps", type=int, default=2)
    p.add_argument("--hf-max-tokens", type=int, default=8)
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from simulator.testing.llm_stub_server import StubLLMServer

    summary: list[str] = []
    with (
        tempfile.TemporaryDirectory(prefix="sim-grid-bench-") as tmp,
        StubLLMServer(latency_s=args.latency, models=[MODEL]) as stub,
    ):
        stub.reply_fn = stub_reply
        summary += measure(args, stub, Path(tmp))
        if args.hf:
            summary += hf_part(args, Path(tmp))
    print("\nSummary")
    for line in summary:
        print(f"  {line}")


if __name__ == "__main__":
    main()
