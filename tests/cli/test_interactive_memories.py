"""'Browse memories' in the menu's conversation actions, through a pseudo-terminal: a grid run
whose memory stream and step rows are written straight into the menu's store (no model), then
agent, stream, reflection tree and one step's retrievals picked as a person would."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pty_session import BACKSPACE, ENTER, REPO
from test_interactive_conversations import ANSI, make_experiment
from test_interactive_conversations import spawn as spawn  # prints each screen on failure

from simulator.memory.domain.records import new_record
from simulator.store.database import open_database
from simulator.store.store import open_store

pytestmark = pytest.mark.pty
MAIN = "What do you want to do?"


def grid_experiment(sim, tmp_path: Path) -> str:
    data = yaml.safe_load((REPO / "prompts" / "experiments" / "takata_grid.yaml").read_text())
    data["name"] = "Memory grid"
    data["llms"] = [{"model": "mock:g"}]
    data["world"].update(agents=2, steps=2, width=5, height=5)
    path = tmp_path / "memory_grid.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return sim.json("experiment", "create", str(path))["id"]


def store_run(tmp_path: Path, experiment_id: str) -> str:
    """A finished two-agent grid run with agent0's stream, a thought on two of its records,
    and step 2's prompt showing the thought; agent1 has one memory."""
    store = open_store(open_database(str(tmp_path / "data" / "store"), "llm_simulator"))
    world = {"width": 5, "height": 5, "torus": True, "agents": 2, "steps": 2, "radius": 1}
    run = store.conversations.create(
        {
            "kind": "grid",
            "experiment_id": experiment_id,
            "owner": "alice",
            "status": "done",
            "counters": {"messages": 4},
            "spec": {
                "kind": "grid",
                "world": {**world, "positions": None, "initial_memory": ""},
                "start": [[0, 0], [1, 0]],
                "llm": {"model": "mock:g"},
                "seed": 1,
                "memory": {"kind": "stream", "minutes_per_step": 10},
            },
            "agents": [{"name": "agent0", "index": 0}, {"name": "agent1", "index": 1}],
        }
    )["_id"]
    heard = new_record(run, 0, 0, "chat", "agent1 said: the pond is frozen", 10, 3)
    cold = new_record(
        run, 0, 1, "observation", "my hands are cold", 10, 4, importance_fallback=True
    )
    winter = new_record(
        run, 0, 2, "thought", "winter has come early", 20, 8, evidence=[heard, cold]
    )
    quiet = new_record(run, 1, 0, "chat", "I said: hello", 10, 2)
    store.memories.insert([heard, cold, winter, quiet])
    store.db.grid_steps.insert_many(
        [
            store.grid_steps.document(
                {"conversation_id": run, "step": step, "agent": f"agent{i}", "agent_index": i}
                | {"retrieved": [winter.id, heard.id] if (step, i) == (2, 0) else []}
            )
            for step in (1, 2)
            for i in (0, 1)
        ]
    )
    store.close()
    return run


def test_browse_memories_from_a_runs_actions(spawn, sim, tmp_path):
    exp_id = grid_experiment(sim, tmp_path)
    run = store_run(tmp_path, exp_id)
    app = spawn(SIM_USER="alice")
    app.menu(MAIN, "Select")
    app.answer("Which experiment?", "Memory grid" + ENTER)
    title = f"Experiment {exp_id}: Memory grid"
    app.menu(title, "Conversations")
    app.answer("Which conversation?", run + ENTER)
    actions = f"Conversation {run} (done)"
    app.menu(actions, "Browse memories")
    app.answer("Whose memories?", "agent0" + ENTER)
    app.menu("Memories of agent0", "Stream over time")
    app.expect("my hands are cold")
    app.expect("winter has come early")
    app.menu("Memories of agent0", "Reflection trees")
    app.expect("winter has come early")
    app.expect("agent1 said: the pond is frozen")
    app.menu("Memories of agent0", "What one step")
    app.answer("Which step? (1–2)", "\x152" + ENTER)
    app.expect("the prompt showed 2 memories")  # after "step 2" in bold
    app.menu("Memories of agent0", "Another agent")
    app.answer("Whose memories?", "agent1" + ENTER)
    app.menu("Memories of agent1", "Stream over time")
    app.expect("I said: hello")
    app.menu("Memories of agent1", "Back")
    app.menu(actions, "Back")
    app.answer("Which conversation?", "Back" + ENTER)
    app.menu(title, "Back")
    app.menu(MAIN, "Exit")
    output = ANSI.sub("", app.finish())
    stream = output[output.index("Stream over time") :]
    assert stream.index("agent1 said: the pond is frozen") < stream.index("my hands are cold")
    assert "4 (fallback)" in output and "step 2: the prompt showed 2 memories" in output
    trees = output[output.index("#2 thought") :]
    assert trees.index("#0 chat") < trees.index("#1 observation")


def offered_actions(app, run: str) -> str:
    """Open a run's actions from its experiment's conversations; the menu's entries as drawn."""
    app.answer("Which conversation?", run + ENTER)
    app.expect(f"Conversation {run} (done)")
    app.expect("Back")  # the last entry: the whole list has been drawn
    return ANSI.sub("", app.child.before)


def test_browse_memories_is_offered_only_for_a_run_with_a_memory_stream(spawn, sim, tmp_path):
    """A plain chat and a grid run on its rolling summary have no memories to browse: the entry
    is not offered (it used to be, and then failed); a grid run with a stream offers it."""
    grid_id = grid_experiment(sim, tmp_path)
    stream_run = store_run(tmp_path, grid_id)
    summary_run = store_run(tmp_path, grid_id)
    store = open_store(open_database(str(tmp_path / "data" / "store"), "llm_simulator"))
    store.db.memories.delete_many({"conversation_id": summary_run})
    store.db.conversations.update_one(
        {"_id": summary_run}, {"$set": {"spec.memory.kind": "summary"}}
    )
    store.close()
    chat_id = make_experiment(sim, tmp_path, ["mock:guard"])
    chat = sim.json("run", chat_id, "--agents", "Guard=1,Prisoner=1", "--messages", "4")

    app = spawn(SIM_USER="alice")
    app.menu(MAIN, "Select")
    app.answer("Which experiment?", "Memory grid" + ENTER)
    grid_title = f"Experiment {grid_id}: Memory grid"
    app.menu(grid_title, "Conversations")
    entries = offered_actions(app, summary_run)
    assert "View prompts" in entries and "Browse memories" not in entries, entries
    app.child.send("Back" + ENTER)
    entries = offered_actions(app, stream_run)
    assert "Browse memories" in entries, entries
    app.child.send("Back" + ENTER)
    app.answer("Which conversation?", "Back" + ENTER)
    app.menu(grid_title, "Back")

    app.menu(MAIN, "Select")
    app.answer("Which experiment?", "Prison" + ENTER)
    chat_title = f"Experiment {chat_id}: Prison experiment"
    app.menu(chat_title, "Conversations")
    entries = offered_actions(app, chat["conversation_id"])
    assert "View prompts" in entries and "Browse memories" not in entries, entries
    app.child.send("Browse memories" + ENTER)  # typed anyway: no entry matches, Enter does nothing
    app.child.send(BACKSPACE * len("Browse memories") + "Back" + ENTER)
    app.answer("Which conversation?", "Back" + ENTER)
    app.menu(chat_title, "Back")
    app.menu(MAIN, "Exit")
    output = ANSI.sub("", app.finish())
    assert "no memory stream" not in output and "Whose memories?" not in output
