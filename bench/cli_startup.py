"""How long `llm-sim` takes to start: each command as a real process, against Python itself.

    python bench/cli_startup.py                        # 15 rounds
    python bench/cli_startup.py --rounds 30
    python bench/cli_startup.py --compare /work/main   # + the same commands from another checkout
    python bench/cli_startup.py --compare-rev 421e344  # + the same commands at that commit

    # the read-only commands on a store bench/store_scale.py built and kept (10,000
    # conversations, 20 messages each), this checkout against the one before:
    python bench/store_scale.py --sizes 10000 --keep /tmp/scale --steps 'sweep status'
    python bench/cli_startup.py --rounds 5 --compare-rev 421e344 \
        --store /tmp/scale/embedded_10000/db --db-name scale

Times, as whole processes from start to exit (output discarded), `llm-sim --help`, `llm-sim
--version`, `llm-sim run --help`, and on a tiny store (one experiment, one sweep of two
conversations, built before timing in a temp SIM_DB folder) the read-only commands `llm-sim
experiment list`, `experiment show EXP_ID`, `sweep status SWEEP_ID`, `sweep list`,
`conversation list` and `conversation show CONVERSATION_ID`, against `python -c "import click"`
and `python -c pass` in the same run. Each round runs every process once, in an order rotated
per round, so a busy machine weighs on all of them alike. Prints the best and median seconds,
the median's ratio to `import click`, and how many modules the process held at exit (read once
per command, through the same `main()`).

The commands run as `python main.py ARGS` from this checkout (`--script`: the installed
`llm-sim` script, with this checkout first on PYTHONPATH). `--compare PATH` adds each command
run from another checkout, interleaved in the same rounds; `--compare-rev REV` the same from
this repository's REV (a commit, a tag), extracted with `git archive` into a temp folder: the
commit before the read-only commands read the store's files, 421e344, gives the before and
after in one run. `--store DIR [--db-name NAME]` runs the store's commands on an existing
embedded store instead of the tiny one (its newest experiment and sweep, its listing's first
conversation), where the query engine's cost grows with the store. The processes run without
PYTHONDONTWRITEBYTECODE, from .pyc files compiled once before timing (`compileall`), as an
installed copy runs. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = {
    "--help": ["--help"],
    "--version": ["--version"],
    "run --help": ["run", "--help"],
    "experiment list": ["experiment", "list"],
    "experiment show": ["experiment", "show", "{experiment}"],
    "sweep status": ["sweep", "status", "{sweep}"],
    "sweep list": ["sweep", "list"],
    "conversation list": ["conversation", "list"],
    "conversation show": ["conversation", "show", "{conversation}"],
}
BASELINES = {'python -c "import click"': "import click", "python -c pass": "pass"}
# `python -c PROBE OUT ARGS...`: `llm-sim ARGS` through main(), then its modules' count to OUT
PROBE = (
    "import atexit, sys\n"
    "out = sys.argv[1]\n"
    "sys.argv = ['llm-sim', *sys.argv[2:]]\n"
    "atexit.register(lambda: open(out, 'w').write(str(len(sys.modules))))\n"
    "from simulator.cli.main import main\n"
    "main()\n"
)
COUNT = "\nimport sys\nprint(len(sys.modules))"  # appended to a baseline: its modules' count


def environment(
    folder: Path, checkout: Path, store: tuple[Path, str] | None = None
) -> dict[str, str]:
    """A clean environment: this bench's store (`store`: an existing one's folder and database
    name), settings and logs; `checkout` imported first."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SIM_", "DB_", "MONGODB", "OPENAI", "OLLAMA", "PYTHON"))
    }
    if store is not None:
        env.update(SIM_DB=str(store[0]), SIM_DB_NAME=store[1])
    env.update(
        SIM_DB=env.get("SIM_DB", str(folder / "store")),
        SIM_DATA_DIR=str(folder / "data"),
        SIM_CONFIG_DIR=str(folder / "config"),
        SIM_LOG_DIR=str(folder / "logs"),
        SIM_USER="bench",
        PYTHONPATH=str(checkout),
    )
    return env


def compiled(checkout: Path) -> None:
    """Byte-compile the checkout once, as an install does: a process that recompiles every
    module from source (PYTHONDONTWRITEBYTECODE set) takes several times longer to start."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "compileall", "-q", str(checkout / "simulator")]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)


def cli_argv(checkout: Path, args: list[str], script: bool) -> list[str]:
    if script:
        found = shutil.which("llm-sim")
        if found is None:
            sys.exit("--script: no llm-sim on PATH (pip install -e .)")
        return [found, *args]
    return [sys.executable, str(checkout / "main.py"), *args]


def run(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def tiny_store(folder: Path, env: dict[str, str]) -> dict[str, str]:
    """One experiment (the shipped prison chat) and a sweep of two short conversations: the
    ids the commands name (experiment, sweep, conversation)."""
    import json

    main = [sys.executable, str(REPO / "main.py")]
    experiment = REPO / "prompts" / "experiments" / "prison.yaml"
    made = json.loads(run([*main, "experiment", "create", str(experiment), "--json"], env, folder))
    sweep = [*main, "sweep", "create", made["id"], "--repetitions", "2", "--llm", "openai:stub"]
    sweep += ["--messages", "4", "--agents", "Guard=1,Prisoner=1", "--yes", "--json"]
    sweep_id = json.loads(run(sweep, env, folder))["sweep_id"]
    listed = json.loads(run([*main, "conversation", "list", "--json"], env, folder))
    return {"experiment": made["id"], "sweep": sweep_id, "conversation": listed[0]["_id"]}


def stored_ids(folder: Path, env: dict[str, str]) -> dict[str, str]:
    """The ids the commands name on an existing store (`--store`): its newest experiment and
    sweep, and the first conversation its listing shows."""
    import json

    main = [sys.executable, str(REPO / "main.py")]
    found = {}
    for key, args, field in (
        ("experiment", ["experiment", "list"], "id"),
        ("sweep", ["sweep", "list"], "sweep_id"),
        ("conversation", ["conversation", "list", "--limit", "1"], "_id"),
    ):
        listed = json.loads(run([*main, *args, "--json"], env, folder))
        if not listed:
            sys.exit(f"--store: no {key} there: give a store with one of each")
        found[key] = listed[0][field]
    return found


def extracted(rev: str, into: Path) -> Path:
    """This repository at `rev`, extracted (git archive) into the folder `into`."""
    into.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], capture_output=True, check=False
    )
    if archive.returncode != 0:
        sys.exit(f"--compare-rev {rev}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd, timeout=300
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr.decode()}")
    return elapsed


def module_count(args: list[str], env: dict[str, str], cwd: Path) -> int:
    out = cwd / "modules.txt"
    run([sys.executable, "-c", PROBE, str(out), *args], env, cwd)
    return int(out.read_text())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--script", action="store_true", help="run the installed llm-sim script")
    p.add_argument("--compare", type=Path, metavar="PATH", help="another checkout, side by side")
    p.add_argument("--compare-rev", metavar="REV", help="this repository at REV, side by side")
    p.add_argument("--store", type=Path, metavar="DIR", help="an existing embedded store")
    p.add_argument("--db-name", default="llm_simulator", help="its database (with --store)")
    args = p.parse_args()
    store = None if args.store is None else (args.store.resolve(), args.db_name)
    with tempfile.TemporaryDirectory(prefix="cli_startup_") as tmp:
        checkouts = {"": REPO}
        if args.compare is not None:
            checkouts[f" [{args.compare.name}]"] = args.compare.resolve()
        if args.compare_rev is not None:
            checkouts[f" [{args.compare_rev}]"] = extracted(args.compare_rev, Path(tmp) / "rev")
        for checkout in checkouts.values():
            compiled(checkout)
        folder = Path(tmp) / "run"
        folder.mkdir()
        env = environment(folder, REPO, store)
        ids = tiny_store(folder, env) if store is None else stored_ids(folder, env)
        cases: dict[str, tuple[list[str], dict[str, str]]] = {}
        counts: dict[str, int] = {}
        for label, code in BASELINES.items():
            cases[label] = ([sys.executable, "-c", code], env)
            counts[label] = int(run([sys.executable, "-c", code + COUNT], env, folder))
        for suffix, checkout in checkouts.items():
            checkout_env = environment(folder, checkout, store)
            for label, template in COMMANDS.items():
                given = [part.format(**ids) for part in template]
                name = f"llm-sim {label}{suffix}"
                cases[name] = (cli_argv(checkout, given, args.script), checkout_env)
                counts[name] = module_count(given, checkout_env, folder)

        names = list(cases)
        times: dict[str, list[float]] = {name: [] for name in names}
        for round_index in range(args.rounds):
            shift = round_index % len(names)
            for name in names[shift:] + names[:shift]:
                argv, case_env = cases[name]
                times[name].append(timed(argv, case_env, folder))

    click_median = statistics.median(times['python -c "import click"'])
    width = max(len(name) for name in names)
    print(f"{args.rounds} rounds, interleaved; seconds per process, start to exit")
    print(f"{'process':<{width}}  {'best':>6}  {'median':>6}  {'/ click':>7}  {'modules':>7}")
    for name in names:
        best, median = min(times[name]), statistics.median(times[name])
        print(
            f"{name:<{width}}  {best:6.3f}  {median:6.3f}  {median / click_median:6.2f}x"
            f"  {counts.get(name, 0):7d}"
        )
    for suffix in list(checkouts)[1:]:  # each other checkout against this one, command by command
        print(f"\nthis checkout against{suffix}: median seconds, and its time as a share of theirs")
        for label in COMMANDS:
            ours = statistics.median(times[f"llm-sim {label}"])
            theirs = statistics.median(times[f"llm-sim {label}{suffix}"])
            print(f"{label:<{width}}  {ours:6.3f}  {theirs:6.3f}  {ours / theirs:6.2f}x")


if __name__ == "__main__":
    main()
