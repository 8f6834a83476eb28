"""The interactive menu of `python main.py`, driven through a pseudo-terminal.

Menu entries and experiments are picked by typing part of their label (every list filters as
you type), so the tests do not depend on counting arrow presses; every prompt text is matched
exactly.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from pty_session import BACKSPACE, CLEAR_LINE, CTRL_C, DOWN, ENTER, FINISH, PRISON, REPO

pytestmark = pytest.mark.pty

MAIN = "What do you want to do?"
PICK = "Which experiment?"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_first_run_asks_the_name_once_and_remembers_it(spawn, tmp_path):
    first = spawn()
    first.answer("Your name", "not a name!" + ENTER)
    first.answer("use 1-64 letters", CLEAR_LINE + "alice" + ENTER)
    first.expect("Hello alice.")
    first.menu(MAIN, "Info")
    first.expect("user config file")
    first.menu(MAIN, "Exit")
    first.finish()
    stored = json.loads((tmp_path / "config" / "config.json").read_text())
    assert stored == {"user": "alice"}

    second = spawn()
    second.expect("Logged in as alice.")
    second.menu(MAIN, "Exit")
    assert "Your name" not in second.finish()


def test_import_select_show_update_export_duplicate(spawn, sim, tmp_path):
    app = spawn(SIM_USER="alice")
    app.menu(MAIN, "Select")
    app.expect("No experiments yet")
    app.menu(MAIN, "Import")
    app.answer("Path of the YAML file", "missing.yaml" + ENTER)
    app.expect("does not exist")  # a UserError is one paragraph; the menu goes on
    app.menu(MAIN, "Import")
    app.answer("Path of the YAML file", f"{PRISON}{ENTER}")
    exp_id = app.expect(r"exp_[0-9a-z]+", regex=True)
    app.menu(MAIN, "Select")
    app.expect(PICK)
    app.answer(
        "Prison experiment — alice (you) — Guards and prisoners in a simulated prison",
        "Prison" + ENTER,
    )
    title = f"Experiment {exp_id}: Prison experiment"
    app.menu(title, "Show")
    app.expect("starting message")
    app.expect("role Guard (they): Starting prompt, Goal")
    app.menu(title, "Update")
    app.answer("Mark as one of your favourites?", "y")
    app.answer("Note", ENTER)
    app.expect(f"Updated {exp_id}.")
    app.menu(title + " ★", "Export")
    app.answer("Export to which YAML file?", ENTER)  # default: prison_experiment.yaml
    app.expect(f"Exported {exp_id} to prison_experiment.yaml.")
    app.menu(title, "Duplicate")
    app.menu(f"Duplicate of {exp_id} as 'Prison experiment (copy)'", "Change: Name")
    app.answer("Experiment name", CLEAR_LINE + "Prison remix" + ENTER)
    app.menu(f"Duplicate of {exp_id} as 'Prison remix'", "Save the copy")
    copy_id = app.expect(r"Created copy exp_[0-9a-z]+", regex=True).split()[-1]
    app.expect("(Prison remix); now showing your copy.")
    # typing picks by label: with the old letter shortcuts "delete" landed on Export
    app.menu(f"Experiment {copy_id}: Prison remix", "delete")
    app.answer(f"Delete {copy_id} (Prison remix)?", "y")
    app.expect(f"Deleted {copy_id}.")
    app.menu(MAIN, "Exit")
    app.finish()

    exported = (tmp_path / "prison_experiment.yaml").read_text(encoding="utf-8")
    assert exported == sim("experiment", "export", exp_id)
    [listed] = sim.json("experiment", "list")
    assert listed["id"] == exp_id and listed["favourite"] is True


def test_create_an_experiment_through_every_prompt(spawn, sim):
    app = spawn(SIM_USER="alice")
    app.menu(MAIN, "Create")
    app.answer("Experiment name", "Tiny jail" + ENTER)
    app.answer(
        "Starting message (opens every conversation)",
        "The <WARDEN_NOUN> meets <INMATE_NUM_WORD> <INMATES_NOUN>." + FINISH,  # a typo
    )
    app.answer("(e.g. local:smollm2", "olama:llama3" + ENTER)
    app.expect("Did you mean 'ollama:'?")
    app.answer("(e.g. local:smollm2", CLEAR_LINE + "mock:echo" + ENTER)
    app.answer("Set generation parameters for mock:echo?", "y")
    app.answer("temperature (0–2; blank to leave unset)", "5" + ENTER)
    app.expect("less than or equal to 2")
    app.answer("temperature (0–2; blank to leave unset)", "0.5" + ENTER)
    app.answer("top_p (above 0, up to 1; blank to leave unset)", ENTER)
    app.answer("top_k (1–1000; blank to leave unset)", ENTER)
    app.answer("max_tokens (1–32768; blank to leave unset)", "50" + ENTER)
    app.answer("seed (0–9223372036854775807; blank to leave unset)", ENTER)
    app.answer("Add another LLM?", "n")
    app.answer("Section titles", "Starting prompt, Rules" + ENTER)
    app.answer("Which sections are shared by every role?", DOWN + " " + ENTER)
    app.answer("Role names", "Warden, Inmate" + ENTER)
    app.answer("Pronoun for Warden", "she" + ENTER)
    app.answer("Pronoun for Inmate", ENTER)  # they, the default
    # the starting message was typed before the roles existed: it is checked as soon as they do
    app.expect(
        "starting message: unknown placeholder <INMATES_NOUN> in this text. "
        "Did you mean <INMATE_NOUN>?"
    )
    app.answer(
        "Starting message (opens every conversation)",
        CLEAR_LINE + "The <WARDEN_NOUN> meets <INMATE_NUM_WORD> <INMATE_NOUN>." + FINISH,
    )
    app.answer("Summarizer section titles (none: no daily summary)", ENTER)  # one at a time
    app.answer("Summarizer section title 1 (empty to finish)", "Summary" + ENTER)
    app.answer("Summarizer section title 2 (empty to finish)", ENTER)
    app.answer("Mark as one of your favourites?", "y")
    app.answer("Note (optional)", "made in a pty" + ENTER)
    app.answer(
        "Role Warden, section 'Starting prompt' — the role's starting prompt",
        "You are the <WARDEN_NOUN>." + FINISH,
    )
    app.answer(
        "Role Inmate, section 'Starting prompt' — the role's starting prompt",
        "You are watched by <WARDN_NOUN>." + FINISH,
    )
    # checked as the section is typed: the prompt stays, with a suggestion, until it is fixed
    app.expect("unknown placeholder <WARDN_NOUN> in this text. Did you mean <WARDEN_NOUN>?")
    app.child.send(CLEAR_LINE + "You are watched by the <WARDEN_NOUN>." + FINISH)
    app.answer("Shared section 'Rules' (every role sees it)", "Be brief." + FINISH)
    app.answer("Summarizer section 'Summary' — its starting prompt", "Summarise." + FINISH)
    app.answer("Agents of role Warden for the preview (1–99)", ENTER)
    app.answer("Agents of role Inmate for the preview (1–99)", CLEAR_LINE + "2" + ENTER)
    app.expect("The warden meets two inmates.")
    app.menu("Save?", "yes")
    exp_id = app.expect(r"Created experiment exp_[0-9a-z]+", regex=True).split()[-1]
    app.menu(MAIN, "Exit")
    app.finish()

    data = sim.json("experiment", "show", exp_id)
    exp = data["experiment"]
    assert data["owner"] == "alice" and data["favourite"] is True
    assert exp["note"] == "made in a pty"
    [llm] = exp["llms"]
    assert llm["model"] == "mock:echo"
    assert {k: v for k, v in llm["params"].items() if v is not None} == {
        "temperature": 0.5,
        "max_tokens": 50,
    }
    assert [(r["name"], r["pronoun"]) for r in exp["roles"]] == [
        ("Warden", "she"),
        ("Inmate", "they"),
    ]
    assert exp["roles"][1]["sections"] == [
        {"title": "Starting prompt", "content": "You are watched by the <WARDEN_NOUN>."}
    ]
    assert exp["shared_sections"] == [{"title": "Rules", "content": "Be brief."}]
    assert exp["summarizer_sections"] == [{"title": "Summary", "content": "Summarise."}]


def test_second_user_is_not_offered_delete_but_can_duplicate(spawn, sim):
    exp_id = sim.json("experiment", "create", str(PRISON))["id"]
    bob = spawn(SIM_USER="bob")
    bob.expect("Logged in as bob.")
    bob.menu(MAIN, "Select")
    bob.answer(PICK, "Prison" + ENTER)
    title = f"Experiment {exp_id}: Prison experiment"
    bob.expect(title)
    bob.expect("Update (favourite)")  # a colleague may star it, not change its note
    bob.child.send("del" + ENTER)  # matches no entry: Enter does nothing
    bob.child.send(BACKSPACE * 3 + "Export" + ENTER)
    bob.answer("Export to which YAML file?", CTRL_C)
    bob.expect("Cancelled.")
    screen = ANSI.sub("", bob.transcript.getvalue())
    assert "Delete" not in screen and "favourite, note" not in screen, screen
    assert "starting message" not in screen  # the Enter on "del" picked nothing (e.g. Show)
    bob.menu(title, "Duplicate")
    bob.menu(f"Duplicate of {exp_id} as 'Prison experiment (copy)'", "Change: Roles")
    bob.answer("Role names", CTRL_C)  # leaves this change, keeps the copy
    bob.expect("Change cancelled.")
    bob.menu(f"Duplicate of {exp_id} as 'Prison experiment (copy)'", "Save the copy")
    copy_id = bob.expect(r"Created copy exp_[0-9a-z]+", regex=True).split()[-1]
    bob.expect(f"Experiment {copy_id}: Prison experiment (copy)")
    bob.expect("Update (favourite, note)")  # the copy is bob's own
    bob.child.send("Back" + ENTER)
    bob.menu(MAIN, "Exit")
    bob.finish()

    listed = {e["id"]: e for e in sim.json("experiment", "list", user="bob")}
    assert listed[exp_id]["owner"] == "alice"
    assert listed[copy_id]["owner"] == "bob"
    assert listed[copy_id]["duplicated_from"] == exp_id


def test_ctrl_c_returns_to_the_menu_then_exits_cleanly(spawn, sim):
    exp_id = sim.json("experiment", "create", str(PRISON))["id"]
    app = spawn(SIM_USER="alice")
    app.menu(MAIN, "Create")
    app.answer("Experiment name", "Half-made" + ENTER)
    app.answer("Starting message (opens every conversation)", CTRL_C)
    app.expect("Cancelled.")
    app.menu(MAIN, "Select")
    app.answer(PICK, "Prison" + ENTER)
    title = f"Experiment {exp_id}: Prison experiment"
    app.menu(title, "Export")
    app.answer("Export to which YAML file?", CTRL_C)
    app.expect("Cancelled.")
    app.answer(title, CTRL_C)  # Ctrl-C at the experiment menu: back to the main menu
    app.answer(MAIN, CTRL_C)
    app.expect("Bye.")
    app.finish()
    assert len(sim.json("experiment", "list")) == 1


def test_password_is_asked_hidden_and_never_logged(spawn, tmp_path):
    secret = "s3cret-Pa55"
    app = spawn(DB_USER="carol", DB_CLUSTER_URL="127.0.0.1:9")
    app.answer("MongoDB password for carol", secret + ENTER)
    app.expect("Logged in as carol.")  # the DB user is the acting user; no name is asked
    app.menu(MAIN, "Exit")
    output = app.finish()
    assert secret not in output and "Your name" not in output
    for path in (tmp_path / "logs").rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(encoding="utf-8", errors="replace")


def test_without_a_terminal_the_menu_explains_itself(pty_env, tmp_path):
    proc = subprocess.run(
        [sys.executable, str(REPO / "main.py")],
        cwd=tmp_path,
        env=pty_env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "the interactive menu needs a terminal" in proc.stderr
    assert "Traceback" not in proc.stderr
