"""`llm-sim import reference` as a researcher runs it, and the imported data through the same
commands as native data: list, show --render, conversation show, duplicate, export, measures."""

from __future__ import annotations

import json
import uuid

import pytest
from bson import ObjectId

from simulator.store.database import open_database
from simulator.testing.reference_fixture import build_prison_database, reference_hashes


@pytest.fixture
def setup(store_uri, run_cli):
    """A reference database and an empty target on the same server; `sim(*args, user=…)`."""
    source_name = f"ref_{uuid.uuid4().hex[:8]}"
    target_name = f"t_{uuid.uuid4().hex[:8]}"
    source = open_database(store_uri, source_name)
    ids = build_prison_database(source.db)

    def sim(*args: str, user: str = "carol"):
        env = {"SIM_DB": store_uri, "SIM_DB_NAME": target_name, "SIM_USER": user}
        return run_cli(list(args), env=env)

    importing = ("import", "reference", "--from", store_uri, "--db-name", source_name)
    yield sim, importing, source.db, ids
    source.close()


def test_import_then_use_imported_data_like_native(setup, tmp_path):
    sim, importing, source_db, ids = setup
    before = reference_hashes(source_db)
    result = sim(*importing, "--yes")
    assert result.code == 0, result.err
    shown = " ".join(result.out.split())
    assert "imported" in shown and "<GUARD_VERB_MAKE> (base form) became" in shown
    assert "num_ctx 10000" in shown
    again = sim(*importing, "--yes", "--json")
    assert again.code == 0, again.err
    assert again.json()["counts"]["conversations"] == {
        "found": 4,
        "imported": 0,
        "present": 4,
        "skipped": 0,
    }
    assert reference_hashes(source_db) == before

    listed = sim("experiment", "list", "--json").json()
    assert {(e["owner"], e["name"]) for e in listed} == {
        ("alice", "Prison study, pilot"),
        ("bob", "Teacher & Student (2024-06-01 08:00)"),
    }
    alice = f"exp_ref_{ids['alice']}"
    shown = sim("experiment", "show", alice, "--render", "guard=2,prisoner=1")
    assert shown.code == 0, shown.err
    assert "The guards make sure that every prisoner follows the rules." in shown.out

    conversation = f"conv_ref_{ids['two_days']}"
    transcript = sim("conversation", "show", conversation)
    assert transcript.code == 0, transcript.err
    assert "summary of day 1" in transcript.out and "Day 2" in transcript.out

    exported = sim("export", alice, "-o", str(tmp_path / "out"), "--json")
    assert exported.code == 0, exported.err
    rows = {f["table"]: f["rows"] for f in exported.json()["files"]}
    assert rows["conversations"] == 3 and rows["messages"] == 19 + 18 + 9
    assert rows["summaries"] == 1
    messages = [json.loads(line) for line in (tmp_path / "out" / "messages.jsonl").open()]
    assert {m["role"] for m in messages} == {"guard", "prisoner"}

    measured = sim("measures", alice, "--json")
    assert measured.code == 0, measured.err
    assert len(measured.json()["cells"]) == 3
    one = sim("measures", conversation, "--json")
    assert one.code == 0, one.err

    page = tmp_path / "report.html"
    reported = sim("report", alice, "-o", str(page))
    assert reported.code == 0, reported.err
    html = page.read_text(encoding="utf-8")
    assert conversation in html and "Prison study, pilot" in html


def test_another_user_duplicates_alices_imported_experiment(setup):
    sim, importing, _, ids = setup
    assert sim(*importing, "--yes").code == 0
    alice = f"exp_ref_{ids['alice']}"
    copy = sim("experiment", "duplicate", alice, "--json", user="dave")
    assert copy.code == 0, copy.err
    assert copy.json()["owner"] == "dave" and copy.json()["duplicated_from"] == alice
    refused = sim("experiment", "delete", alice, "--yes", user="dave")
    assert refused.code == 2 and "belongs to 'alice'" in refused.err


def test_dry_run_writes_nothing(setup):
    sim, importing, source_db, _ = setup
    before = reference_hashes(source_db)
    result = sim(*importing, "--dry-run")
    assert result.code == 0, result.err
    shown = " ".join(result.out.split())
    assert "dry run: nothing was written" in shown and "would import" in shown
    assert sim("experiment", "list", "--json").json() == []
    assert sim("conversation", "list", "--json").json() == []
    assert reference_hashes(source_db) == before


def test_strict_refuses_a_broken_source_and_writes_nothing(setup):
    sim, importing, source_db, _ = setup
    broken = source_db.experiments.insert_one({"_id": ObjectId(), "creator": "x"}).inserted_id
    result = sim(*importing, "--strict", "--yes")
    assert result.code == 2
    assert "--strict: 1 source documents cannot be imported" in result.err
    assert f"experiment {broken}: the experiment lacks" in " ".join(result.out.split())
    assert sim("experiment", "list", "--json").json() == []

    lenient = sim(*importing, "--yes", "--json")
    assert lenient.code == 0
    assert lenient.json()["counts"]["experiments"]["skipped"] == 1
    assert lenient.json()["skipped"][0]["source_id"] == str(broken)


def test_without_yes_and_without_a_terminal_nothing_is_imported(setup):
    sim, importing, _, _ = setup
    result = sim(*importing)
    assert result.code == 2 and "--yes" in result.err
    assert sim("experiment", "list", "--json").json() == []


def test_source_credentials_are_never_printed(run_cli, tmp_path):
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "carol", "SIM_DB_TIMEOUT_MS": "300"}
    result = run_cli(
        ["import", "reference", "--from", "mongodb://alice:s3cret-pw@127.0.0.1:1/"], env=env
    )
    assert result.code == 2
    assert "--from" in result.err
    assert "s3cret-pw" not in result.out + result.err


def test_a_missing_embedded_source_is_refused_and_not_created(run_cli, tmp_path):
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "carol"}
    result = run_cli(["import", "reference", "--from", str(tmp_path / "nowhere")], env=env)
    assert result.code == 2 and "no embedded store" in result.err
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.pty
def test_menu_imports_after_showing_the_dry_run(tmp_path):
    """Main menu -> Import from the reference tool -> location -> database -> confirm."""
    import os
    import sys
    from pathlib import Path

    import pexpect

    repo = Path(__file__).resolve().parents[2]
    source_path = tmp_path / "reference"
    build_prison_database(open_database(str(source_path), "final_experiments").db)
    target = tmp_path / "store"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SIM_", "DB_", "MONGODB", "OPENAI", "OLLAMA"))
    }
    env.update(
        SIM_DATA_DIR=str(tmp_path / "data"),
        SIM_CONFIG_DIR=str(tmp_path / "config"),
        SIM_LOG_DIR=str(tmp_path / "logs"),
        SIM_DB=str(target),
        SIM_USER="carol",
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",
        PYTHONPATH=str(repo),
    )
    child = pexpect.spawn(
        sys.executable,
        [str(repo / "main.py")],
        env=env,
        cwd=str(tmp_path),
        dimensions=(50, 200),
        encoding="utf-8",
        timeout=120,  # bounds a hang only
    )
    try:
        child.expect_exact("What do you want to do?")
        child.send("Import from the reference\r")
        child.expect_exact("Where is the reference tool's database?")
        child.send("Somewhere else\r")
        child.expect_exact("Location")
        child.send(f"{source_path}\r")
        child.expect_exact("Which database holds the reference's data?")
        child.send("final_experiments\r")
        child.expect_exact("dry run: nothing was written")
        child.expect_exact("Import 2 experiments and 4 conversations?")
        child.send("y")  # a confirm takes the key alone
        child.expect_exact("What do you want to do?")
        child.send("Exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert "Traceback" not in (child.before or "")
    store = open_database(str(target), "llm_simulator")
    assert store.db.experiments.count_documents({"source.tool": "llm_interaction_simulator"}) == 2
    assert store.db.conversations.count_documents({"status": "done"}) == 4
