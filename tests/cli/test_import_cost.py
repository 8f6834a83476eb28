"""What a command imports: `llm-sim --help` and `--version` load click and the entry point only,
and a command loads what it uses (numpy and networkx with the worlds and measures that compute
with them, the model clients with the commands that call models). The read-only commands
(`sweep status`, `sweep list`, `conversation list`, `conversation show`, `experiment list`,
`experiment show`) on an embedded store that is ready read its files without its engine
(store/file_reads.py, store/file_store.py): no litemongo, no pymongo.

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
# Listing experiments on the embedded store: the experiment models, no numeric or graph
# library, no model client; once the store is set up, read from its files, so neither its
# engine (litemongo) nor pymongo, which litemongo's vendored mongomock imports whenever it is
# installed (and raises its error classes, which the repositories catch).
LISTING_WITHOUT = ("numpy", "networkx", "openai", "httpx", "simulator.worlds.network")
# A command's full help builds its options (every world's flags for `run`), nothing it runs:
# no store driver, numeric or graph library, or model client.
RUN_HELP_WITHOUT = ("numpy", "networkx", "pymongo", "litemongo", "openai", "httpx")

# Ceilings on the modules loaded (a bare interpreter holds about 105, `import click` about 132;
# measured: `--version` 162, `--help` 163, `experiment list` 631 on a store it sets up, 429
# with a chat stored (662 when it opened the store), `run --help` 538). Before the commands and
# their libraries loaded lazily: `--help` 826, `experiment list` 719 (1,011 with a chat
# stored), `run --help` 1,030.
STARTING_CEILING = 200
LISTING_CEILING = 690
READ_LISTING_CEILING = 480
RUN_HELP_CEILING = 600

# A sweep's status and the conversation listing, on an embedded store that is ready: neither
# the store's engine (litemongo, and pymongo, which its vendored mongomock imports) nor the
# sweep runner, planner or model clients, nor the experiments' validation. Measured: `sweep
# status` 264 modules, `conversation list` 404; 743 and 708 when both opened the store and
# `sweep status` loaded the runner.
ENGINE = ("litemongo", "pymongo", "mongomock")
STATUS_WITHOUT = (
    *ENGINE,
    *LISTING_WITHOUT,
    "pydantic",
    "inflect",
    "tenacity",
    "simulator.engine",
    "simulator.services.sweeps",
    "simulator.cli.commands.sweep_work",
)
CONVERSATION_LIST_WITHOUT = (*ENGINE, *LISTING_WITHOUT, "pydantic", "simulator.engine.sweep_runner")
STATUS_CEILING = 320
CONVERSATION_LIST_CEILING = 460


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
    assert ("simulator.worlds.chat.cli.views" in modules) is stored
    assert under(modules, LISTING_WITHOUT) == []
    assert len(modules) < LISTING_CEILING
    if stored:  # a store that is set up: its files answer
        assert "simulator.store.file_store" in modules
        assert under(modules, ENGINE) == []
        assert len(modules) < READ_LISTING_CEILING
    else:  # the first command sets the store up, with its engine
        assert "litemongo" in modules


def test_a_commands_help_loads_what_builds_its_options_only(tmp_path):
    modules = loaded_by(["run", "--help"], tmp_path)
    assert "simulator.cli.commands.run" in modules
    assert under(modules, RUN_HELP_WITHOUT) == []
    assert len(modules) < RUN_HELP_CEILING


@pytest.fixture
def swept(tmp_path) -> tuple[str, str]:
    """A store with the shipped prison chat and a sweep of two conversations (made by the CLI,
    which sets the store up); the sweep's id and the experiment's."""
    import json

    main = str(REPO / "main.py")
    prison = REPO / "prompts" / "experiments" / "prison.yaml"
    made = llm_sim([main, "experiment", "create", str(prison), "--json"], tmp_path)
    experiment_id = json.loads(made.stdout)["id"]
    create = [main, "sweep", "create", experiment_id, "--repetitions", "2"]
    create += ["--llm", "openai:stub", "--messages", "4", "--agents", "Guard=1,Prisoner=1"]
    done = llm_sim([*create, "--yes", "--json"], tmp_path)
    return json.loads(done.stdout)["sweep_id"], experiment_id


def test_a_sweeps_status_reads_the_store_files_without_engine_or_runner(swept, tmp_path):
    swept, _ = swept
    modules = loaded_by(["sweep", "status", swept], tmp_path)
    assert "simulator.store.file_reads" in modules  # it read the sweep
    assert under(modules, STATUS_WITHOUT) == []
    assert len(modules) < STATUS_CEILING
    shown = " ".join(
        llm_sim([str(REPO / "main.py"), "sweep", "status", swept], tmp_path).stdout.split()
    )
    assert f"{swept} (" in shown and "0/2 done" in shown and "0 calls, 0 tokens out" in shown


@pytest.mark.parametrize(
    "flags", [[], ["--mine"], ["--experiment", "EXP"], ["--json"]], ids=" ".join
)
def test_the_conversation_list_reads_the_store_files_without_engine(flags, swept, tmp_path):
    import json

    swept, experiment_id = swept
    flags = [experiment_id if flag == "EXP" else flag for flag in flags]
    modules = loaded_by(["conversation", "list", *flags], tmp_path)
    assert "simulator.store.file_reads" in modules
    assert under(modules, CONVERSATION_LIST_WITHOUT) == []
    assert len(modules) < CONVERSATION_LIST_CEILING
    shown = llm_sim([str(REPO / "main.py"), "conversation", "list", *flags], tmp_path).stdout
    if "--json" in flags:
        assert [row["sweep_id"] for row in json.loads(shown)] == [swept, swept]
    else:
        assert shown.count("pending") == 2


def test_a_store_not_set_up_yet_is_opened_with_its_engine(tmp_path):
    """The files are read only once the store has been set up: a first listing opens it."""
    modules = loaded_by(["conversation", "list"], tmp_path)
    assert "litemongo" in modules and "simulator.store.store" in modules
    assert (tmp_path / "store").is_dir()  # set up by that first open
    again = loaded_by(["conversation", "list"], tmp_path)
    assert "litemongo" not in again


# The other read-only commands on a store that is ready. `experiment show` and `sweep list`
# load what the listings load; `conversation show` loads the world's run part (its engine and
# numeric libraries), through which a world stores its rows, but not the store's engine.
# Measured: `experiment show` 428 modules, `sweep list` 264, `conversation show` 659; 661, 601
# and 813 when they opened the store.
READ_ONLY_WITHOUT = (*ENGINE, "openai", "httpx")
SWEEP_LIST_WITHOUT = (*STATUS_WITHOUT,)
READ_ONLY_CEILINGS = {"experiment show": 480, "sweep list": 320, "conversation show": 720}


def first_conversation(tmp_path: Path) -> str:
    import json

    listed = llm_sim([str(REPO / "main.py"), "conversation", "list", "--json"], tmp_path)
    return json.loads(listed.stdout)[0]["_id"]


@pytest.mark.parametrize(
    "command",
    [
        ["experiment", "show", "EXP"],
        ["experiment", "show", "EXP", "--json"],
        ["sweep", "list"],
        ["sweep", "list", "--experiment", "EXP", "--json"],
        ["conversation", "show", "CONV"],
        ["conversation", "show", "CONV", "--prompts", "--json"],
    ],
    ids=" ".join,
)
def test_the_read_only_commands_read_the_store_files_without_engine(command, swept, tmp_path):
    _, experiment_id = swept
    found = {"EXP": experiment_id}
    if "CONV" in command:
        found["CONV"] = first_conversation(tmp_path)
    args = [found.get(part, part) for part in command]
    modules = loaded_by(args, tmp_path)
    assert "simulator.store.file_store" in modules  # the files answered
    name = " ".join(command[:2])
    assert under(modules, SWEEP_LIST_WITHOUT if name == "sweep list" else READ_ONLY_WITHOUT) == []
    assert len(modules) < READ_ONLY_CEILINGS[name]
    shown = llm_sim([str(REPO / "main.py"), *args], tmp_path).stdout
    assert (experiment_id if name != "conversation show" else found["CONV"]) in shown


def test_the_menus_first_screen_reads_no_store(swept, tmp_path):
    """`python main.py` logs in and offers its actions without opening the store (its
    experiment picker opens it, as the menu may offer a choice of databases first)."""
    import pexpect

    out = tmp_path / "modules.txt"
    env = {**environment(tmp_path), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(
        sys.executable,
        ["-c", PROBE, str(out)],
        env=env,
        cwd=str(tmp_path),
        dimensions=(50, 200),
        encoding="utf-8",
        timeout=120,
    )
    child.expect_exact("What do you want to do?")
    child.send("\x03")  # Ctrl-C: leave the menu
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    modules = set(out.read_text().split("\n"))
    assert "simulator.cli.interactive.app" in modules  # the probe drew the menu
    assert under(modules, (*ENGINE, "simulator.store.file_reads")) == []
