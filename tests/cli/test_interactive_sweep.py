"""'Perform conversations (sweep)' from the experiment menu, through a pseudo-terminal.

The experiment is the shipped prison one with two `mock:` models, so the 32 conversations of the
sweep run offline in a few seconds.
"""

from __future__ import annotations

import re

import pytest
from pty_session import CLEAR_LINE, CTRL_C, DOWN, ENTER
from test_interactive_conversations import ANSI, make_experiment, open_experiment
from test_interactive_conversations import spawn as spawn  # prints each screen on failure

from simulator.testing import StubLLMServer

pytestmark = pytest.mark.pty

SPACE = " "
OTHER_SLOTS = (
    "Guard/Risks",
    "Prisoner/Goal",
    "Prisoner/Personality",
    "Prisoner/Risks",
    "shared/Researcher oversight",
)


def test_sweep_plan_confirm_run(spawn, sim, tmp_path):
    exp_id = make_experiment(sim, tmp_path, ["mock:a", "mock:b"])
    app, title = open_experiment(spawn, exp_id)

    app.menu(title, "sweep")
    app.answer("Conversations per setting (1–10000)", CTRL_C)  # Ctrl-C: back to the experiment
    app.expect("Cancelled.")

    app.menu(title, "sweep")
    app.answer("Conversations per setting (1–10000)", CLEAR_LINE + "2" + ENTER)
    app.answer("One LLM per conversation", DOWN + SPACE + ENTER)  # mock:a is ticked; add mock:b
    app.answer("Total messages", CLEAR_LINE + "1" + ENTER)
    app.expect("1 is too few")
    app.answer("Total messages", CLEAR_LINE + "4" + ENTER)
    app.answer("How are messages counted?", ENTER)  # agent turns, the default
    app.answer("Days (1–2)", CLEAR_LINE + "2" + ENTER)
    app.answer("Try every value from 1 to 2?", "y")
    app.answer("Maximum agents of role Guard (1–99)", ENTER)
    app.answer("Maximum agents of role Prisoner (1–99)", CLEAR_LINE + "2" + ENTER)
    app.answer("Try every combination", "y")
    app.answer("Speaker methods", ENTER)  # round_robin, ticked by default
    app.answer("Variants of Guard/Personality", DOWN + SPACE + ENTER)  # respectful + abusive
    for slot in OTHER_SLOTS:
        app.answer(f"Variants of {slot}", ENTER)
    app.answer("Seed, blank for none", ENTER)
    app.expect("plan: ")  # the plan once, as sweep create prints it
    app.expect("= 16 cells x 2 repetitions = 32 conversations")
    app.expect("(0 conversations of the plan already stored)")
    app.expect("sample cell: mock:a 1v1 d1 round_robin [Personality=respectful]")
    app.answer("Create and run this sweep?", "y")
    app.answer("Conversations at a time (1–256)", ENTER)
    sweep_id = app.expect(r"Sweep s[a-z]*_[0-9a-z]+: 32 new conversations stored", regex=True)
    sweep_id = sweep_id.split()[1].rstrip(":")
    app.expect("32/32 done")
    app.menu(title, "Back")
    app.menu("What do you want to do?", "Exit")
    output = ANSI.sub("", app.finish())
    assert "is not complete" not in output

    [row] = sim.json("sweep", "list")
    assert row["sweep_id"] == sweep_id
    assert (row["total"], row["done"], row["failed"]) == (32, 32, 0)
    status = sim.json("sweep", "status", sweep_id)
    assert status["complete"] is True
    assert status["counts"]["done"] == 32
    docs = sim.json("conversation", "list")
    labels = {d.get("cell_label") for d in docs}
    assert len(labels) == 16, labels
    assert {re.search(r"Personality=(\w+)", label).group(1) for label in labels} == {
        "respectful",
        "abusive",
    }


def test_ctrl_c_during_the_sweep_stops_after_the_turns(spawn, sim, pty_env, tmp_path):
    """A slow loopback model, so the sweep is still running when Ctrl-C arrives; the
    interrupted conversations then finish with `sweep resume`."""
    with StubLLMServer(latency_s=0.3) as stub:
        pty_env["OPENAI_BASE_URL"] = stub.openai_base_url  # for the pty and the commands alike
        exp_id = make_experiment(sim, tmp_path, ["openai:stub"])
        app, title = open_experiment(spawn, exp_id)
        app.menu(title, "sweep")
        app.answer("Conversations per setting (1–10000)", CLEAR_LINE + "4" + ENTER)
        app.expect("LLM: openai:stub")  # one LLM: nothing to choose
        app.answer("Total messages", CLEAR_LINE + "6" + ENTER)
        app.answer("How are messages counted?", ENTER)
        app.answer("Days (1–3)", ENTER)
        app.answer("Maximum agents of role Guard (1–99)", ENTER)
        app.answer("Maximum agents of role Prisoner (1–99)", ENTER)
        app.answer("Speaker methods", ENTER)
        for slot in ("Guard/Personality", *OTHER_SLOTS):
            app.answer(f"Variants of {slot}", ENTER)
        app.answer("Seed, blank for none", ENTER)
        app.expect("= 1 cell x 4 repetitions = 4 conversations")
        app.answer("Create and run this sweep?", ENTER)
        app.answer("Conversations at a time (1–256)", CLEAR_LINE + "2" + ENTER)
        sweep_id = app.expect(r"Running sweep_[0-9a-z]+", regex=True).split()[1]
        app.child.send(CTRL_C)
        app.expect("Stopping: cancelling the request in flight")
        app.expect(f"Sweep {sweep_id} is not complete; finish it with llm-sim sweep resume")
        app.menu(title, "Back")
        app.menu("What do you want to do?", "Exit")
        app.finish()
        status = sim.json("sweep", "status", sweep_id)
        assert status["counts"]["done"] < 4
        assert status["counts"]["failed"] == 0
        resumed = sim.json("sweep", "resume", sweep_id)
    assert resumed["complete"] is True
