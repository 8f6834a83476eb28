"""The interactive grid flows through a pseudo-terminal: create a grid experiment from the
shipped defaults (changing a few numbers and a template), then perform one run of it."""

from __future__ import annotations

import pytest
from pty_session import CLEAR_LINE, ENTER, FINISH
from test_interactive_conversations import ANSI
from test_interactive_conversations import spawn as spawn  # prints each screen on failure

pytestmark = pytest.mark.pty
MAIN = "What do you want to do?"


def test_create_a_grid_experiment_then_run_it(spawn, sim):
    app = spawn(SIM_USER="alice")
    app.menu(MAIN, "Create 2D grid")
    app.answer("Experiment name", CLEAR_LINE + "Small grid" + ENTER)
    app.answer("Use the shipped models", "n")
    app.answer("(e.g. local:smollm2", "mock:g" + ENTER)
    app.answer("Set generation parameters for mock:g?", "n")
    app.answer("Add another LLM?", "n")
    app.answer("Field width (1–1000)", CLEAR_LINE + "10" + ENTER)
    app.answer("Field height (1–1000)", CLEAR_LINE + "8" + ENTER)
    app.answer("Wrap around at the edges", "y")
    app.answer("Number of agents (1–1000)", CLEAR_LINE + "3" + ENTER)
    app.answer("Steps per run (1–10000)", CLEAR_LINE + "2" + ENTER)
    app.answer("Message range (Chebyshev distance) (0–2000)", CLEAR_LINE + "1" + ENTER)
    app.answer("The message prompt", FINISH)  # the shipped template, kept
    app.answer("The memory prompt", FINISH)
    app.answer("The move prompt", FINISH)
    app.answer("Note", ENTER)
    app.answer("Mark as favourite?", "n")
    app.expect("kind grid: 3 agents on 10 x 8 torus, message radius 1, 2 steps")
    app.menu("Save?", "Yes")
    created = app.expect(r"Created experiment exp_[0-9a-z]+", regex=True).split()[-1]
    app.menu(MAIN, "Select")
    app.answer("Which experiment?", "Small grid" + ENTER)
    title = f"Experiment {created}: Small grid"
    app.menu(title, "Perform a grid run")
    app.answer("Number of agents (1–1000)", ENTER)
    app.answer("Steps (1–10000)", ENTER)
    app.answer("Message range (0–2000)", ENTER)
    app.answer("Seed, blank for none", "5" + ENTER)
    app.expect("Step 2")
    app.expect("done")
    app.menu(title, "Back")
    app.menu(MAIN, "Exit")
    output = ANSI.sub("", app.finish())
    assert "Traceback" not in output
    experiment = sim.json("experiment", "show", created)["experiment"]
    assert experiment["world"]["width"] == 10 and experiment["world"]["height"] == 8
    assert experiment["prompts"]["move"].endswith("x+1, x-1, y+1, y-1, stay.")
    runs = sim.json("conversation", "list")
    assert len(runs) == 1 and runs[0]["status"] == "done"
    assert runs[0]["spec"]["world"]["radius"] == 1 and runs[0]["spec"]["seed"] == 5
