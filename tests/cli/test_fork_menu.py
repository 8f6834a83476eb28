"""'Fork here' and 'Replay' in the interactive conversation browser, through a pseudo-terminal.

The real `python main.py` is driven as a person would (the harness of tests/cli), on the shipped
prison experiment with `mock:` models (deterministic, in-process, offline); what the menu stored
is read back with the non-interactive commands.
"""

from __future__ import annotations

import pytest
from pty_session import CLEAR_LINE, ENTER, FINISH, REPO, Pty
from test_interactive_conversations import (
    ANSI,
    CONVERSATIONS,
    MAIN,
    MOCKS,
    PICK,
    make_experiment,
)

pytestmark = pytest.mark.pty
GRID = REPO / "prompts" / "experiments" / "takata_grid.yaml"


@pytest.fixture
def alice(spawn):
    """A menu session as alice (tests/cli/conftest.py's `spawn`)."""
    return lambda: spawn(SIM_USER="alice")


@pytest.fixture
def sim_json(sim):
    """A non-interactive `llm-sim … --json` against the same store, as alice."""
    return sim.json


def open_conversation(app: Pty, experiment: str, exp_id: str, conv_id: str) -> tuple[str, str]:
    """From the main menu to one conversation's actions; (experiment title, action title)."""
    title = f"Experiment {exp_id}: {experiment}"
    app.menu(MAIN, "Select")
    app.answer(PICK, experiment + ENTER)
    app.menu(title, "Conversations")
    app.answer(CONVERSATIONS, conv_id + ENTER)
    return title, f"Conversation {conv_id} (done)"


def leave(app: Pty, title: str, action_title: str) -> str:
    app.menu(action_title, "Back")
    app.answer(CONVERSATIONS, "Back" + ENTER)
    app.menu(title, "Back")
    app.menu(MAIN, "Exit")
    return ANSI.sub("", app.finish())


def test_fork_here_with_an_edit_twice_then_replay(alice, sim, sim_json, tmp_path):
    exp_id = make_experiment(sim, tmp_path, MOCKS)
    parent = sim_json(
        "run",
        exp_id,
        "--agents",
        "Guard=1,Prisoner=1",
        "--messages",
        "4",
        "--days",
        "2",
        "--llm-for",
        "Prisoner=mock:prisoner",
        "--summarizer-llm",
        "mock:manager",
        "--seed",
        "3",
    )["conversation_id"]
    before = {m["day"]: m for m in sim_json("conversation", "show", parent)["messages"]}
    assert before

    app = alice()
    title, actions = open_conversation(app, "Prison", exp_id, parent)
    app.menu(actions, "Fork here")
    app.expect("Fork at which message?")
    app.expect("[1:0] Guard_1: reply 1 to: Researcher:")  # the picker's lines
    app.expect("[2:1] Prisoner_1:")
    app.child.send("[1:1]" + ENTER)
    app.answer("Put your own text at 1:1 in place of Prisoner_1's?", "y")
    app.answer("What Prisoner_1 says at 1:1", CLEAR_LINE + "I will cooperate." + FINISH)
    app.answer("Model for the agents from the fork point", ENTER)  # keep the parent's
    app.answer("How is the next speaker chosen from the fork point?", ENTER)  # keep
    app.answer("Change the variants of sections?", "n")  # prison's sections have variants
    app.answer("Repetitions (one continuation each) (1–", CLEAR_LINE + "2" + ENTER)
    app.answer("Seed of the first continuation", ENTER)  # the parent's, prefilled
    app.expect("fork: fork of " + parent + " at 1:1 (day 1's message #2): shares its 1 message")
    app.expect("fork: edit: Prisoner_1 says the researcher's text at 1:1")
    app.expect("fork: seeds 3 to 4, one per repetition")
    app.expect("models: Guard: mock:guard, Prisoner: mock:prisoner, summarizer: mock:manager")
    app.answer("Start 2 continuations?", "y")
    done = app.expect(rf"Forks of {parent} at 1:1: conv_\w+ \(done\), conv_\w+ \(done\)", True)
    forks = [word for word in done.split() if word.startswith("conv_") and word != parent]

    # the listing and the detail say where each fork comes from
    app.menu(actions, "Back")
    app.expect(CONVERSATIONS)
    app.expect(f"alice (you) — fork of {parent} at 1:1")
    app.child.send(forks[0] + ENTER)
    fork_actions = f"Conversation {forks[0]} (done)"
    app.expect(f"fork of {parent} at 1:1 with the researcher's text there (continuation 1")
    app.menu(fork_actions, "View")
    app.expect(f"(shared, stored in {parent})")
    app.expect("I will cooperate.")
    app.expect("(edited by the researcher)")
    app.menu(fork_actions, "Back")
    app.answer(CONVERSATIONS, parent + ENTER)

    # the parent replayed from the menu: a deterministic model gives the same ledger
    app.menu(actions, "Replay")
    app.answer(f"Replay {parent} with its spec, seed and models", "y")
    app.expect(f"replay: replay of {parent} (chat)")
    app.expect(rf"conv_\w+: replay of {parent}, done", True)
    app.expect("verdict: identical: all")
    leave(app, title, actions)

    listed = {d["_id"]: d for d in sim_json("conversation", "list", "--all")}
    stored = [d for d in listed.values() if d.get("fork_of") == parent]
    assert sorted(d["_id"] for d in stored) == sorted(forks)
    assert sorted(d["fork_repetition"] for d in stored) == [1, 2]
    assert sorted(d["spec"]["seed"] for d in stored) == [3, 4]
    assert len({d["fork_group"] for d in stored}) == 1
    replayed = [d for d in listed.values() if d.get("replay_of") == parent]
    assert len(replayed) == 1 and replayed[0]["status"] == "done"
    parent_messages = sim_json("conversation", "show", parent)["messages"]
    for fork in forks:
        doc = listed[fork]
        assert doc["fork_at"] == {"day": 1, "index": 1}
        assert doc["fork_edit"]["text"] == "I will cooperate."
        assert doc["fork_edit"]["speaker"] == "Prisoner_1"
        messages = sim_json("conversation", "show", fork)["messages"]
        shared, edited = messages[0], messages[1]
        # the prefix is the parent's message, read from the parent (stored there only)
        assert (shared["day"], shared["index"], shared["conversation_id"]) == (1, 0, parent)
        assert shared["text"] == parent_messages[0]["text"]
        assert (edited["day"], edited["index"], edited["conversation_id"]) == (1, 1, fork)
        assert edited["edited"] is True and edited["text"] == "I will cooperate."
        assert all(m["conversation_id"] == fork for m in messages[1:])
        assert len(messages) == len(parent_messages)


def test_fork_here_refused_for_a_grid_run_which_replays(alice, sim, sim_json, tmp_path):
    data = GRID.read_text(encoding="utf-8").replace("local:smollm2", "mock:g")
    path = tmp_path / "grid_mock.yaml"
    path.write_text(data, encoding="utf-8")
    exp_id = sim_json("experiment", "create", str(path))["id"]
    run = sim_json("run", exp_id, "--agents", "3", "--steps", "2", "--seed", "4")
    assert run["status"] == "done"
    name = sim_json("experiment", "show", exp_id)["experiment"]["name"]

    app = alice()
    title, actions = open_conversation(app, name, exp_id, run["conversation_id"])
    app.menu(actions, "Fork here")
    app.expect(f"{run['conversation_id']} is a grid run; forks branch chat conversations")
    app.menu(actions, "Replay")
    app.answer("Replay", "y")
    app.expect(f"replay of {run['conversation_id']}, done")
    app.expect("verdict: identical")
    output = leave(app, title, actions)
    assert "Fork at which message?" not in output
    runs = sim_json("conversation", "list", "--all")
    assert not any(r.get("fork_of") for r in runs)
    assert [r["replay_of"] for r in runs if r.get("replay_of")] == [run["conversation_id"]]
