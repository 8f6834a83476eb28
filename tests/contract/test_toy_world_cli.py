"""A world that lives outside simulator/ (tests/market_world, named by SIM_WORLDS) joins the
command line as a shipped one does: `run --help` and `sweep create --help` list its options
under its own heading, and its experiment file imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from market_world.testing import sample

REPO = Path(__file__).resolve().parents[2]
TOY_ENV = {
    "SIM_WORLDS": "market_world:ROW",
    "PYTHONPATH": os.pathsep.join((str(REPO), str(REPO / "tests"))),
}


def llm_sim(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python main.py ARGS` with the toy worlds named, as a researcher's shell would."""
    return subprocess.run(
        [sys.executable, str(REPO / "main.py"), *args],
        env={**os.environ, **TOY_ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_run_help_lists_the_markets_options():
    shown = llm_sim("run", "--help")
    assert shown.returncode == 0, shown.stderr
    heading = shown.stdout.index("Market options")
    assert "--rounds" in shown.stdout[heading:]
    assert "Rounds of offers at most" in shown.stdout[heading:]


def test_sweep_create_help_lists_the_markets_options():
    shown = llm_sim("sweep", "create", "--help")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    heading = text.index("Options for a two-agent market (kind: market)")
    assert "--market-rounds" in text[heading:] and "Market rounds per cell" in text[heading:]


def test_the_markets_experiment_file_imports(tmp_path):
    path = tmp_path / "market.yaml"
    path.write_text(sample.EXPERIMENT_YAML, encoding="utf-8")
    env = {
        "SIM_DB": str(tmp_path / "store"),
        "SIM_USER": "alice",
        "SIM_DATA_DIR": str(tmp_path / "data"),
        "SIM_CONFIG_DIR": str(tmp_path / "config"),
        "SIM_LOG_DIR": str(tmp_path / "logs"),
    }
    imported = llm_sim("experiment", "import", str(path), "--json", env=env)
    assert imported.returncode == 0, imported.stderr
    experiment_id = json.loads(imported.stdout)["id"]
    shown = llm_sim("experiment", "show", experiment_id, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "kind market: a used bicycle" in " ".join(shown.stdout.split())


def test_a_world_registered_in_a_running_process_brings_its_flags(toy_worlds, run_cli):
    """`register` after the commands were imported (a notebook, a test): the commands parse
    and list the new world's flags all the same."""
    run_help = run_cli(["run", "--help"])
    assert run_help.code == 0 and "Market options" in run_help.out
    sweep_help = run_cli(["sweep", "create", "--help"])
    text = " ".join(sweep_help.out.split())
    assert sweep_help.code == 0 and "(kind: market): --market-rounds" in text
