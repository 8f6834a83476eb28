"""Session log folders are made only when a command runs something: never for help, a version
or a list, and never in the current folder unless SIM_LOG_DIR says so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from simulator import __version__
from simulator.logs import SessionLog
from simulator.settings import log_dir

REPO = Path(__file__).resolve().parents[2]
PRISON = REPO / "prompts" / "experiments" / "prison.yaml"


def folders(base: Path) -> list[Path]:
    return sorted(p for p in base.iterdir() if p.is_dir()) if base.exists() else []


@pytest.fixture
def logs(tmp_path) -> Path:
    return tmp_path / "session-logs"


def test_help_version_and_lists_make_no_log_folder(sim, tmp_path, logs):
    db = str(tmp_path / "store")
    env = {"SIM_LOG_DIR": str(logs)}
    exp_id = sim("experiment", "create", str(PRISON), "--json", db=db, env=env).json()["id"]
    for args in (
        ("--help",),
        ("--version",),
        ("run", "--help"),
        ("sweep", "create", "--help"),
        ("experiment", "list"),
        ("experiment", "list", "--json"),
        ("experiment", "show", exp_id),
        ("conversation", "list"),
        ("info",),
    ):
        result = sim(*args, db=db, env=env)
        assert result.code == 0, (args, result.err)
    assert folders(logs) == []
    assert not (tmp_path / "logs").exists()  # sim runs in tmp_path: nothing in the current folder


def test_a_run_makes_one_folder_with_its_command_line(sim, tmp_path, logs):
    db = str(tmp_path / "store")
    env = {"SIM_LOG_DIR": str(logs)}
    exp_id = sim("experiment", "create", str(PRISON), "--json", db=db, env=env).json()["id"]
    args = ("run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "2", "--llm", "mock:x")
    result = sim(*args, db=db, env=env)
    assert result.code == 0, result.err
    [folder] = folders(logs)
    info = (folder / "info.log").read_text(encoding="utf-8")
    assert (
        f"llm-sim {__version__}: run {exp_id} --agents guard=1,prisoner=1" in info
    )  # held, then written


def test_the_default_is_the_user_log_directory_not_the_current_folder(sim, tmp_path):
    state = tmp_path / "state"
    env = {"SIM_LOG_DIR": None, "XDG_STATE_HOME": str(state)}
    db = str(tmp_path / "store")
    exp_id = sim("experiment", "create", str(PRISON), "--json", db=db, env=env).json()["id"]
    info = sim("info", "--json", db=db, env=env).json()
    assert Path(info["log_dir"]) == state / "llm-sim" / "log"
    args = ("run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "2", "--llm", "mock:x")
    assert sim(*args, db=db, env=env).code == 0
    assert len(folders(state / "llm-sim" / "log")) == 1
    assert not (tmp_path / "logs").exists()


def test_sim_log_dir_still_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("SIM_LOG_DIR", str(tmp_path / "mine"))
    assert log_dir() == tmp_path / "mine"


def test_records_are_held_until_a_warning_makes_the_folder(tmp_path):
    session = SessionLog(tmp_path / "base")
    logger = logging.getLogger("simulator.test_session_logs")
    logger.addHandler(session)
    logger.setLevel(logging.DEBUG)
    try:
        logger.info("first, with a password mongodb://u:hunter2@host/")
        assert not (tmp_path / "base").exists()
        logger.warning("something went wrong")
    finally:
        logger.removeHandler(session)
        session.close()  # closes (and so flushes) both files
    [folder] = folders(tmp_path / "base")
    info = (folder / "info.log").read_text(encoding="utf-8").splitlines()
    assert [line.split(" ", 3)[3] for line in info] == [
        "simulator.test_session_logs: first, with a password mongodb://u:***@host/",
        "simulator.test_session_logs: something went wrong",
    ]
