"""Performing and browsing conversations from the experiment menu, through a pseudo-terminal.

The experiment is the shipped prison one with `mock:` models (or a loopback stub server where a
slow model is needed), so every run is offline and takes well under a second per message.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from pty_session import CLEAR_LINE, CTRL_C, ENTER, PRISON

from simulator.testing import StubLLMServer

pytestmark = pytest.mark.pty

MAIN = "What do you want to do?"
PICK = "Which experiment?"
CONVERSATIONS = "Which conversation?"
WHO = "Who speaks next?"
REPEAT = "May the same agent speak twice in a row?"
COUNTING = "How are messages counted?"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
MOCKS = ["mock:guard", "mock:prisoner", "mock:manager"]


@pytest.fixture
def spawn(spawn):
    """conftest's `spawn`, printing each session's screen text (shown only when a test fails)."""
    sessions = []

    def start(**extra: str):
        session = spawn(**extra)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        print(ANSI.sub("", session.transcript.getvalue()))


def make_experiment(sim, tmp_path: Path, models: list[str]) -> str:
    """Import prison.yaml with its LLMs replaced, through the command line (faster than menus)."""
    data = yaml.safe_load(PRISON.read_text(encoding="utf-8"))
    data["llms"] = [{"model": m} for m in models]
    path = tmp_path / "prison_mock.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return sim.json("experiment", "create", str(path))["id"]


def open_experiment(spawn, exp_id: str, user: str = "alice"):
    app = spawn(SIM_USER=user)
    app.menu(MAIN, "Select")
    app.answer(PICK, "Prison" + ENTER)
    return app, f"Experiment {exp_id}: Prison experiment"


def answer_perform(
    app,
    title: str,
    method: str,
    total: str,
    days: str,
    summarizer: str = "mock:manager",
    repeat: str = "n",
) -> None:
    """Guard on mock:guard, Prisoner on mock:prisoner, one agent each, no seed; `repeat` answers
    whether an agent may speak twice in a row (asked for manual)."""
    app.menu(title, "Perform conversation")
    app.answer("LLM for role Guard", ENTER)  # the default: the first LLM
    app.answer("LLM for role Prisoner", "prisoner" + ENTER)
    app.answer("How is the next speaker chosen?", method + ENTER)
    if method == "manual":
        app.answer(REPEAT, repeat)
    app.answer("Summarizer LLM (writes each day's summary)", summarizer + ENTER)
    app.answer(COUNTING, ENTER)  # the default: agent turns
    app.answer("Total messages", CLEAR_LINE + total + ENTER)
    app.answer("Days (1–", CLEAR_LINE + days + ENTER)
    app.answer("Agents of role Guard (1–99)", ENTER)
    app.answer("Agents of role Prisoner (1–99)", ENTER)
    app.answer("Seed, blank for none", ENTER)
    app.answer("Start the conversation?", "y")


def test_perform_round_robin_then_manual(spawn, sim, tmp_path):
    exp_id = make_experiment(sim, tmp_path, MOCKS)
    app, title = open_experiment(spawn, exp_id)

    app.menu(title, "Perform conversation")
    app.answer("LLM for role Guard", CTRL_C)  # Ctrl-C while answering: back to the experiment
    app.expect("Cancelled.")
    app.menu(title, "Perform conversation")
    app.answer("LLM for role Guard", ENTER)
    app.answer("LLM for role Prisoner", "prisoner" + ENTER)
    app.answer("How is the next speaker chosen?", "round" + ENTER)
    app.answer("Summarizer LLM (writes each day's summary)", "manager" + ENTER)
    app.answer(COUNTING, ENTER)
    app.answer("Total messages", CLEAR_LINE + "0" + ENTER)
    app.expect("0 is too few")
    app.answer("Total messages", CLEAR_LINE + "4" + ENTER)
    app.answer("Days (1–2)", CLEAR_LINE + "2" + ENTER)
    app.expect("agent turns per day: 2, 2")
    app.answer("Agents of role Guard (1–99)", ENTER)
    app.answer("Agents of role Prisoner (1–99)", ENTER)
    app.answer("Seed, blank for none", ENTER)
    app.answer("Start the conversation?", "y")
    app.expect("Day 1")
    app.expect("Guard_1")  # in the role's colour
    app.expect(": reply 1 to: Researcher:")  # the mock's "[guard]" prefix is trimmed as bleed
    app.expect("Prisoner_1")
    app.expect(": reply 1 to:")
    app.expect("Summary of day 1:")
    app.expect("Day 2")
    first = app.expect(r"Conversation conv_[0-9a-z]+ done", regex=True).split()[1]

    answer_perform(app, title, "manual", total="4", days="1", repeat="y")
    # each prompt is matched whole: an answered one still shows "Who speaks next?"
    app.answer("Day 1, message 1. " + WHO, "pris" + ENTER)  # Prisoner_1 opens
    app.answer("Day 1, message 2; last: Prisoner_1. " + WHO, "pris" + ENTER)  # and goes on
    app.answer("Day 1, message 3; last: Prisoner_1. " + WHO, "guard" + ENTER)  # then Guard_1
    app.answer("Day 1, message 4; last: Guard_1. " + WHO, ENTER)  # default: the next one
    second = app.expect(r"Conversation conv_[0-9a-z]+ done", regex=True).split()[1]

    answer_perform(app, title, "manual", total="5", days="1", repeat="n")
    app.answer("Day 1, message 1. " + WHO, "pris" + ENTER)
    # repeats off (the reference's way): Prisoner_1 is not offered, Guard_1 is the default
    app.answer("Day 1, message 2; last: Prisoner_1. " + WHO, ENTER)
    app.answer("Day 1, message 3; last: Guard_1. " + WHO, CTRL_C)  # Ctrl-C stops at once
    app.expect("Stopped at once; the conversation is kept, marked interrupted.")
    app.menu(title, "Back")
    app.menu(MAIN, "Exit")
    app.finish()

    listed = {d["_id"]: d for d in sim.json("conversation", "list")}
    assert len(listed) == 3
    assert listed[first]["status"] == "done"
    assert listed[first]["counters"]["messages"] == 4
    assert listed[first]["day_split"] == [2, 2]
    assert {a["model"] for a in listed[first]["agents"]} == {"mock:guard", "mock:prisoner"}
    assert listed[second]["status"] == "done"
    [third] = set(listed) - {first, second}
    assert listed[third]["status"] == "interrupted"
    assert listed[second]["spec"]["allow_repeat_speaker"] is True
    assert listed[third]["spec"]["allow_repeat_speaker"] is False
    assert listed[third]["spec"]["total_messages"] == 5  # odd totals are allowed
    third_shown = sim.json("conversation", "show", third)
    assert [m["speaker"] for m in third_shown["messages"]] == ["Prisoner_1", "Guard_1"]
    shown = sim.json("conversation", "show", second)
    assert [m["speaker"] for m in shown["messages"]] == [
        "Prisoner_1",
        "Prisoner_1",
        "Guard_1",
        "Prisoner_1",
    ]


def test_view_favourite_and_delete_owner_only(spawn, sim, tmp_path):
    exp_id = make_experiment(sim, tmp_path, MOCKS)
    run = sim.json(
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
    )
    conv_id = run["conversation_id"]
    assert run["status"] == "done"

    bob, title = open_experiment(spawn, exp_id, user="bob")
    bob.menu(title, "Conversations")
    bob.answer(CONVERSATIONS, conv_id + ENTER)
    menu = f"Conversation {conv_id} (done)"
    bob.menu(menu, "View")
    bob.expect("summary of day 1")
    bob.expect("summary of day 2")
    bob.menu(menu, "Add to favourites")
    bob.expect(f"{conv_id} added to your favourites.")
    bob.menu(menu + " ★", "Back")
    bob.answer(CONVERSATIONS, "Back" + ENTER)
    bob.menu(title, "Back")
    bob.menu(MAIN, "Exit")
    output = ANSI.sub("", bob.finish())
    assert "Delete" not in output  # a colleague's conversation: Delete is not offered
    for name in ("Guard_1: reply 1 to", "Prisoner_1: reply 1 to", "Guard_1 (mock:guard)"):
        assert name in output
    assert sim.json("conversation", "list", user="bob")[0]["favourite"] is True
    assert sim.json("conversation", "list", user="alice")[0]["favourite"] is False

    alice, title = open_experiment(spawn, exp_id)
    alice.menu(title, "Conversations")
    alice.answer(CONVERSATIONS, conv_id + ENTER)
    alice.menu(menu, "View prompts")
    alice.expect("response:")
    alice.menu(menu, "Delete")
    alice.answer(f"Delete {conv_id} with its 4 messages, 6 calls and 2 summaries?", "n")
    alice.expect("Nothing deleted.")
    alice.menu(menu, "Delete")
    alice.answer(f"Delete {conv_id} with its 4 messages, 6 calls and 2 summaries?", "y")
    alice.expect(f"Deleted {conv_id} with its 4 messages, 6 calls and 2 summaries.")
    alice.expect("No conversations of this experiment yet")
    alice.menu(title, "Back")
    alice.menu(MAIN, "Exit")
    alice.finish()
    assert sim.json("conversation", "list") == []


@pytest.mark.skipif(shutil.which("less") is None, reason="the default pager, less, is absent")
def test_view_prompts_in_the_pager_shows_no_escape_codes(spawn, sim, tmp_path):
    """More calls than a screen holds go through the pager; less (without -R) showed every
    colour code as literal `ESC[1m` text."""
    exp_id = make_experiment(sim, tmp_path, ["mock:guard"])
    run = sim.json("run", exp_id, "--agents", "Guard=1,Prisoner=1", "--messages", "22")
    conv_id = run["conversation_id"]
    app = spawn(SIM_USER="alice", PAGER="less", MANPAGER="", LESS="")
    app.menu(MAIN, "Select")
    app.answer(PICK, "Prison" + ENTER)
    app.menu(f"Experiment {exp_id}: Prison experiment", "Conversations")
    app.answer(CONVERSATIONS, conv_id + ENTER)
    menu = f"Conversation {conv_id} (done)"
    app.menu(menu, "View prompts")
    app.expect("agent_turn")  # the pager's first screen
    app.expect("Guard_1")
    app.child.send("q")
    app.menu(menu, "Back")
    app.answer(CONVERSATIONS, "Back" + ENTER)
    app.menu(f"Experiment {exp_id}: Prison experiment", "Back")
    app.menu(MAIN, "Exit")
    screen = ANSI.sub("", app.finish())
    for raw in ("ESC[", "[bold]", "[/bold]", "[green]", "\\x1b"):
        assert raw not in screen, raw
    assert "system:" in screen and "response:" in screen


def test_ctrl_c_during_a_run_stops_it_at_once(spawn, sim, tmp_path):
    """A slow loopback model, so a request is in flight when Ctrl-C arrives: it is cancelled,
    not waited for."""
    with StubLLMServer(latency_s=0.3) as stub:
        exp_id = make_experiment(sim, tmp_path, ["openai:stub"])
        title = f"Experiment {exp_id}: Prison experiment"
        app = spawn(SIM_USER="alice", OPENAI_BASE_URL=stub.openai_base_url)
        app.menu(MAIN, "Select")
        app.answer(PICK, "Prison" + ENTER)
        app.menu(title, "Perform conversation")
        app.expect("LLM for role Guard: openai:stub")  # one LLM: nothing to choose
        app.answer("How is the next speaker chosen?", ENTER)
        app.answer(COUNTING, ENTER)
        app.answer("Total messages", CLEAR_LINE + "20" + ENTER)
        app.answer("Days (1–10)", ENTER)
        app.answer("Agents of role Guard (1–99)", ENTER)
        app.answer("Agents of role Prisoner (1–99)", ENTER)
        app.answer("Seed, blank for none", ENTER)
        app.answer("Start the conversation?", ENTER)
        app.expect("Reply 1 to: Researcher:")  # the first message is on screen
        app.child.send(CTRL_C)
        app.expect("Stopping: cancelling the request in flight")
        app.expect("Stopped at once; the conversation is kept, marked interrupted.")
        app.menu(title, "Back")
        app.menu(MAIN, "Exit")
        app.finish()
    [doc] = sim.json("conversation", "list")
    assert doc["status"] == "interrupted"
    assert 1 <= doc["counters"]["messages"] < 20
