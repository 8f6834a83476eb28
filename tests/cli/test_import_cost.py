"""What a command imports: `llm-sim --help` and `--version` load click and the entry point only,
and a command loads what it uses (numpy and networkx with the worlds and measures that compute
with them, the model clients with the commands that call models).

Each command runs as its own process (the point is what a fresh process loads) through the real
`main()`, writing `sys.modules` at exit; bench/cli_startup.py times the same commands.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# `python -c PROBE OUT ARGS...`: `llm-sim ARGS` through main(), then the loaded modules to OUT
PROBE = (
    "import atexit, sys\n"
    "out = sys.argv[1]\n"
    "sys.argv = ['llm-sim', *sys.argv[2:]]\n"
    "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules))))\n"
    "from simulator.cli.main import main\n"
    "main()\n"
)

# Starting: nothing but click and the entry point. No store, no models, no validation.
STARTING_WITHOUT = (
    "numpy",
    "networkx",
    "pymongo",
    "bson",
    "litemongo",
    "openai",
    "httpx",
    "pydantic",
    "yaml",
    "rich",
    "asyncio",
    "simulator.store",
    "simulator.cli.commands",
    "simulator.cli.context",
)
# Listing experiments on the embedded store: the store and the experiment models, no numeric
# or graph library, no model client. pymongo is not listed: litemongo's query engine (a
# vendored mongomock) imports it whenever it is installed and raises its error classes, which
# the repositories catch, so it comes with every store this process opens.
LISTING_WITHOUT = ("numpy", "networkx", "openai", "httpx", "simulator.worlds.network")
# A command's full help builds its options (every world's flags for `run`), nothing it runs:
# no store driver, numeric or graph library, or model client.
RUN_HELP_WITHOUT = ("numpy", "networkx", "pymongo", "litemongo", "openai", "httpx")

# Ceilings on the modules loaded (a bare interpreter holds about 105, `import click` about 132;
# measured: `--version` 162, `--help` 163, `experiment list` 631 (658 with a chat stored), `run
# --help` 538). Before the commands and their libraries loaded lazily: `--help` 826, `experiment
# list` 719 (1,011 with a chat stored), `run --help` 1,030.
STARTING_CEILING = 200
LISTING_CEILING = 690
RUN_HELP_CEILING = 600


def environment(tmp_path: Path) -> dict[str, str]:
    """This test's own store, settings and logs; the checkout imported first."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SIM_", "DB_", "MONGODB", "OPENAI", "OLLAMA", "PYTHON"))
    }
    env.update(
        SIM_DB=str(tmp_path / "store"),
        SIM_DATA_DIR=str(tmp_path / "data"),
        SIM_CONFIG_DIR=str(tmp_path / "config"),
        SIM_LOG_DIR=str(tmp_path / "logs"),
        SIM_USER="tester",
        PYTHONPATH=str(REPO),
    )
    return env


def llm_sim(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """`argv` (after the interpreter) as its own process, run in `tmp_path` (no .env there)."""
    done = subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def loaded_by(args: list[str], tmp_path: Path) -> set[str]:
    """The modules a fresh `llm-sim ARGS` process holds when it exits (it must exit 0)."""
    out = tmp_path / "modules.txt"
    llm_sim(["-c", PROBE, str(out), *args], tmp_path)
    return set(out.read_text().split("\n"))


def under(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    """The top packages of `prefixes` that `modules` holds (a package or any of its modules)."""
    return [p for p in prefixes if any(m == p or m.startswith(p + ".") for m in modules)]


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-h"]], ids=" ".join)
def test_starting_the_cli_loads_click_and_the_entry_point_only(args, tmp_path):
    modules = loaded_by(args, tmp_path)
    assert "simulator.cli.main" in modules and "click" in modules  # the probe ran the CLI
    assert under(modules, STARTING_WITHOUT) == []
    assert len(modules) < STARTING_CEILING


@pytest.mark.parametrize("stored", [False, True], ids=["empty store", "a chat stored"])
def test_listing_experiments_loads_no_numeric_graph_or_model_library(stored, tmp_path):
    if stored:  # the listing reads the chat world's views: not its menus or run engine
        prison = REPO / "prompts" / "experiments" / "prison.yaml"
        llm_sim([str(REPO / "main.py"), "experiment", "create", str(prison)], tmp_path)
    modules = loaded_by(["experiment", "list"], tmp_path)
    assert "litemongo" in modules  # the listing read the embedded store
    assert ("simulator.worlds.chat.cli.views" in modules) is stored
    assert under(modules, LISTING_WITHOUT) == []
    assert len(modules) < LISTING_CEILING


def test_a_commands_help_loads_what_builds_its_options_only(tmp_path):
    modules = loaded_by(["run", "--help"], tmp_path)
    assert "simulator.cli.commands.run" in modules
    assert under(modules, RUN_HELP_WITHOUT) == []
    assert len(modules) < RUN_HELP_CEILING
