"""The issue's 'done when' path through the real CLI, on the embedded store and over TCP.

Most calls run `main()` in-process (`sim`); the ones about exit statuses and secrets of a real
process run in a subprocess (`sim_process`).
"""

from __future__ import annotations

import logging
import os
import signal

import pytest

from simulator.settings import redact_uri


@pytest.fixture(params=["embedded", "wire"])
def db(request, tmp_path):
    if request.param == "embedded":
        return str(tmp_path / "store")
    return request.getfixturevalue("wire_server")


def test_full_experiment_life(sim, db, prison_path, tmp_path):
    created = sim("experiment", "create", str(prison_path), "--json", db=db)
    assert created.code == 0, created.err
    exp_id = created.json()["id"]

    listed = sim("experiment", "list", "--json", db=db).json()
    assert exp_id in [e["id"] for e in listed]

    shown = sim(
        "experiment", "show", exp_id, "--render", "guard=2,prisoner=1", "--json", db=db
    ).json()
    guard_prompt = shown["rendered"]["prompts"]["Guard"]
    assert "two guards" in guard_prompt and "one prisoner" in guard_prompt
    assert "<GUARD_NOUN>" not in guard_prompt
    human = sim("experiment", "show", exp_id, "--render", "guard=2,prisoner=1", db=db)
    assert "rendered for 2 Guards, 1 Prisoner" in human.out

    out = tmp_path / "exported.yaml"
    assert sim("experiment", "export", exp_id, "-o", str(out), db=db).code == 0
    assert out.read_text() == prison_path.read_text()
    again = sim("experiment", "create", str(out), "--json", db=db).json()["id"]
    assert sim("experiment", "export", again, db=db).out == out.read_text()

    refused = sim("experiment", "delete", exp_id, "--yes", user="bob", db=db)
    assert refused.code == 2
    assert "belongs to 'alice'" in refused.err
    assert exp_id in [e["id"] for e in sim("experiment", "list", "--json", db=db).json()]

    copy = sim(
        "experiment", "duplicate", exp_id, "--name", "Bob's prison", "--json", user="bob", db=db
    )
    assert copy.code == 0 and copy.json()["owner"] == "bob"
    assert copy.json()["duplicated_from"] == exp_id

    mine = sim("experiment", "list", "--mine", "--json", user="bob", db=db).json()
    assert [e["name"] for e in mine] == ["Bob's prison"]

    assert sim("experiment", "update", exp_id, "--favourite", user="bob", db=db).code == 0
    favs = sim("experiment", "list", "--favourites", "--json", user="bob", db=db).json()
    assert [e["id"] for e in favs] == [exp_id]
    assert sim("experiment", "list", "--favourites", "--json", db=db).json() == []

    assert sim("experiment", "update", exp_id, "--note", "new note", db=db).code == 0
    assert sim("experiment", "show", exp_id, "--json", db=db).json()["note"] == "new note"
    assert sim("experiment", "delete", exp_id, "--yes", db=db).code == 0
    assert exp_id not in [e["id"] for e in sim("experiment", "list", "--json", db=db).json()]


def test_bad_file_exits_2_and_writes_nothing(sim, sim_process, tmp_path, prison_path):
    db = str(tmp_path / "store")
    bad = tmp_path / "bad.yaml"
    bad.write_text(prison_path.read_text().replace("<GUARD_NOUN>", "<GAURD_NOUN>", 1))
    result = sim_process("experiment", "create", str(bad), db=db)
    assert result.code == 2
    assert "<GAURD_NOUN>" in result.err and "Did you mean <GUARD_NOUN>?" in result.err
    assert "Traceback" not in result.err
    assert sim("experiment", "list", "--json", db=db).json() == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("experiment", "show", "exp_nope"), "no experiment with id 'exp_nope'"),
        (("experiment", "create", "missing.yaml"), "does not exist"),
        (("experiment", "update", "exp_x"), "nothing to update"),
    ],
)
def test_user_errors_exit_2(sim, tmp_path, args, expected):
    result = sim(*args, db=str(tmp_path / "store"))
    assert result.code == 2, result.err
    assert expected in result.err


def test_render_rejects_unknown_role(sim, tmp_path, prison_path):
    db = str(tmp_path / "store")
    exp_id = sim("experiment", "create", str(prison_path), "--json", db=db).json()["id"]
    result = sim("experiment", "show", exp_id, "--render", "warden=1", db=db)
    assert result.code == 2 and "unknown role 'warden'" in result.err


def test_render_on_a_world_without_roles_is_refused_not_a_crash(sim, tmp_path, prison_path):
    db = str(tmp_path / "store")
    grid = prison_path.parent / "takata_grid.yaml"
    exp_id = sim("experiment", "import", str(grid), "--json", db=db).json()["id"]
    result = sim("experiment", "show", exp_id, "--render", "guard=1", db=db)
    assert result.code == 2, result.err
    assert "--render" in result.err and "2D community experiment" in result.err
    assert "group chat experiments" in result.err and "Traceback" not in result.err


def test_unreachable_server_is_one_sentence_without_password(sim_process, isolated_settings):
    uri = "mongodb://researcher:s3cr3t-pw@127.0.0.1:9/"
    result = sim_process("experiment", "list", db=uri, env={"SIM_DB_TIMEOUT_MS": "300"})
    assert result.code == 2
    assert "cannot reach MongoDB at 127.0.0.1:9" in result.err
    assert "s3cr3t-pw" not in result.err + result.out
    assert "Traceback" not in result.err
    logs = "".join(
        p.read_text() for p in (isolated_settings / "logs").rglob("*.log") if p.is_file()
    )
    assert "s3cr3t-pw" not in logs
    assert redact_uri(uri) == "mongodb://researcher:***@127.0.0.1:9/"


def test_cluster_variables_build_escaped_uri(sim_process, tmp_path):
    env = {
        "DB_USER": "re searcher",
        "DB_PASSWORD": "p@ss:word/1",
        "DB_CLUSTER_URL": "127.0.0.1:9",
        "SIM_DB_TIMEOUT_MS": "300",
    }
    result = sim_process("info", user=None, env=env)
    assert result.code == 2
    assert "DB_CLUSTER_URL" in result.err
    assert "p@ss:word/1" not in result.err and "p%40ss" not in result.err


def test_info_shows_default_embedded_store(sim, isolated_settings):
    data = sim("info", "--json").json()
    assert data["store_kind"] == "embedded"
    assert data["store_location"].startswith(str(isolated_settings / "data"))
    assert data["user"] == "alice"


def test_settings_precedence_flag_then_env_then_dotenv(sim, tmp_path):
    (tmp_path / ".env").write_text("SIM_USER=carol\nSIM_DB_NAME=from_dotenv\n", encoding="utf-8")
    from_dotenv = sim("info", "--json", user=None).json()
    assert from_dotenv["user"] == "carol" and from_dotenv["database_name"] == "from_dotenv"
    from_env = sim("info", "--json", user="alice").json()
    assert from_env["user"] == "alice" and from_env["database_name"] == "from_dotenv"
    from_flag = sim("--user", "bob", "--db-name", "flagged", "info", "--json", user="alice").json()
    assert from_flag["user"] == "bob" and from_flag["database_name"] == "flagged"


def test_every_option_reads_an_environment_variable(sim, tmp_path, prison_path):
    db = str(tmp_path / "store")
    sim("experiment", "create", str(prison_path), db=db)
    sim("experiment", "create", str(prison_path), db=db, user="bob")
    mine = sim("experiment", "list", "--json", db=db, env={"SIM_EXPERIMENT_LIST_MINE": "1"}).json()
    assert [e["owner"] for e in mine] == ["alice"]
    assert len(sim("experiment", "list", "--json", db=db).json()) == 2


def test_in_process_calls_leave_no_global_state(sim, tmp_path):
    """`sim` runs `main()` in this process: what `.env` set and the handlers stay with the call."""
    (tmp_path / ".env").write_text("SIM_DB_NAME=from_dotenv\n", encoding="utf-8")
    handlers = list(logging.getLogger().handlers)
    sigint = signal.getsignal(signal.SIGINT)
    assert sim("info", "--json").json()["database_name"] == "from_dotenv"
    assert "SIM_DB_NAME" not in os.environ
    assert logging.getLogger().handlers == handlers
    assert signal.getsignal(signal.SIGINT) == sigint
