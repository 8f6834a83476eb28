"""Shared pieces of the grid tests: the shipped experiment in a store and a scripted stub."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from simulator.services import experiments as exp_service
from simulator.testing.cancelled_run import run_cancelling
from simulator.worlds.grid.services import runs as grid_runs

REPO = Path(__file__).resolve().parents[2]
GRID_YAML = REPO / "prompts" / "experiments" / "takata_grid.yaml"


def scripted(move: str = "x+1"):
    """A stub reply function: the move prompt gets `move`, the others a short text naming the
    agent and a hashtag, so delivery can be read back from what agents received."""

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        name = prompt.split("You are ", 1)[1].split(",", 1)[0]
        if "Choose your next move" in prompt:
            return f"I pick {move} now"
        if "Summarise" in prompt:
            return f"memory of {name}"
        return f"hello from {name} #together"

    return reply


def grid_view(store, user: str = "alice"):
    return exp_service.import_yaml(store, GRID_YAML, user)


def cli(db: str, stub, *args: str) -> subprocess.Popen:
    """`python main.py ARGS` in its own process, as a user starts it, against the stub."""
    env = {
        **os.environ,
        "SIM_DB": db,
        "SIM_USER": "alice",
        "OPENAI_BASE_URL": stub.openai_base_url,
        "PYTHONPATH": str(REPO),
        "SIM_PROGRESS_EVERY": "1000",
    }
    return subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_grid(store, run_id: str, cancel_after: int | None = None):
    """Run (or resume) a stored grid run in this process through the real openai client, and
    return its outcome; with `cancel_after`, cancel it (as Ctrl-C does) once that many calls
    have finished, and return None."""

    return run_cancelling(
        lambda llms, on_call: grid_runs.run(store, run_id, llms, on_call=on_call), cancel_after
    )
