"""The interactive network flow through a pseudo-terminal: select the shipped opinion-network
experiment and perform one run of the coevolution theory (no model), its twin."""

from __future__ import annotations

from pathlib import Path

import pytest
from pty_session import ENTER
from test_interactive_conversations import ANSI
from test_interactive_conversations import spawn as spawn  # prints each screen on failure

pytestmark = pytest.mark.pty
MAIN = "What do you want to do?"
NETWORK_YAML = Path(__file__).resolve().parents[2] / "prompts/experiments/llm_sam_network.yaml"


def test_perform_a_theory_run_of_the_shipped_network_experiment(spawn, sim):
    created = sim.json("experiment", "import", str(NETWORK_YAML))["id"]
    app = spawn(SIM_USER="alice")
    app.menu(MAIN, "Select")
    app.answer("Which experiment?", "Opinions and actions" + ENTER)
    title = f"Experiment {created}: Opinions and actions on a social network"
    app.menu(title, "Perform a network run")
    app.menu("Model", "The coevolution theory")
    app.answer("Rounds after round 0", ENTER)
    app.answer("Seed, blank for none", "3" + ENTER)
    app.expect("model: none: the coevolution theory")
    app.expect("round 2: mean opinion")
    app.menu(title, "Back")
    app.menu(MAIN, "Exit")
    output = ANSI.sub("", app.finish())
    assert "Traceback" not in output
    (run,) = sim.json("conversation", "list")
    assert run["status"] == "done" and run["spec"]["model"] == "theory"
    assert run["spec"]["seed"] == 3 and run["spec"]["settings"]["rounds"] == 2
