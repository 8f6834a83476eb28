"""A two-agent grid run with a memory stream and the paper's planning defaults, for the
action and talk tests: the shipped grid experiment, every agent within hearing, the move
prompt opening with the step's {plan} and {action}."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML, run_grid

from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.worlds.grid.services import runs as grid_runs

__all__ = ["moves_shown", "run_grid", "start"]


def start(store, tmp_path, minutes: int, steps: int, **memory) -> str:
    doc = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
    doc["memory"] = {
        "kind": "stream",
        "embedder": "mock:16",
        "reflection": False,
        "top_k": 3,
        "minutes_per_step": minutes,
        **memory,
    }
    doc["prompts"]["move"] = "Plan now: {plan}\nActions: {action}\n" + doc["prompts"]["move"]
    path = tmp_path / "actions.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    view = exp_service.import_yaml(store, path, "alice")
    world = {"agents": 2, "steps": steps, "radius": 25}
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=3, world=world)
    return run_service.create_run(store, view, spec, "alice")["_id"]


def moves_shown(store, run_id: str, agent: str) -> list[list[str]]:
    """The first two lines ({plan}, {action}) of the agent's move prompt, step by step."""
    moves = sorted(
        (
            c
            for c in store.calls.for_conversation(run_id)
            if c["purpose"] == "grid_move" and c["agent"] == agent
        ),
        key=lambda c: c["day"],
    )
    return [store.calls.prompt(c["prompt_hash"])[-1]["content"].split("\n")[:2] for c in moves]
