"""The menu offers the databases on a MongoDB server (without admin/local/config) when no name was
given, as the reference tool did; the embedded store's databases only when it holds several; an
explicit --db-name, SIM_DB_NAME or DB_NAME is never second-guessed."""

from __future__ import annotations

import uuid

import pytest

from simulator.cli.context import AppContext
from simulator.store.database import open_database

MAIN = "What do you want to do?"


def make_databases(uri: str, *names: str) -> None:
    for name in names:
        connection = open_database(uri, name)
        try:
            connection.db.notes.insert_one({"_id": "x"})
        finally:
            connection.close()


class Picker:
    """Stands in for the menu's question: records what was offered, answers `choice`."""

    def __init__(self, choice: str | None = None) -> None:
        self.choice = choice
        self.offered: list[list[str]] = []

    def __call__(self, names: list[str], default: str) -> str:
        self.offered.append(names)
        return self.choice or default


@pytest.fixture(autouse=True)
def no_reference_name(monkeypatch):
    monkeypatch.delenv("DB_NAME", raising=False)


def test_server_databases_are_offered_and_the_pick_is_used(wire_server):
    tag = uuid.uuid4().hex[:8]
    make_databases(wire_server, f"pick_a_{tag}", f"pick_b_{tag}")
    picker = Picker(f"pick_b_{tag}")
    app = AppContext(db_flag=wire_server, pick_database=picker)
    try:
        assert app.store.db.name == f"pick_b_{tag}"
        assert app.store.db.notes.count_documents({}) == 1
    finally:
        app.close()
    offered = picker.offered[0]
    assert {f"pick_a_{tag}", f"pick_b_{tag}"} <= set(offered)
    assert not {"admin", "local", "config"} & set(offered)


def test_an_explicit_name_is_never_second_guessed(wire_server, monkeypatch):
    make_databases(wire_server, f"pick_c_{uuid.uuid4().hex[:8]}")
    cases = [
        ("given_by_flag", None),
        (None, ("SIM_DB_NAME", "by_sim")),
        (None, ("DB_NAME", "by_ref")),
    ]
    for flag, env in cases:
        picker = Picker()
        if env:
            monkeypatch.setenv(*env)
        app = AppContext(db_flag=wire_server, db_name=flag, pick_database=picker)
        try:
            assert app.store.db.name == (flag or env[1])
        finally:
            app.close()
            if env:
                monkeypatch.delenv(env[0])
        assert picker.offered == []


def test_embedded_store_offers_only_when_it_holds_several(tmp_path):
    folder = str(tmp_path / "store")
    make_databases(folder, "llm_simulator")
    picker = Picker()
    app = AppContext(db_flag=folder, pick_database=picker)
    try:
        assert app.store.db.name == "llm_simulator"
    finally:
        app.close()
    assert picker.offered == []

    make_databases(folder, "second_study")
    picker = Picker("second_study")
    app = AppContext(db_flag=folder, pick_database=picker)
    try:
        assert app.store.db.name == "second_study"
    finally:
        app.close()
    assert picker.offered == [["llm_simulator", "second_study"]]


@pytest.mark.pty
def test_menu_asks_which_database_on_a_server(spawn, wire_server):
    name = f"picked_{uuid.uuid4().hex[:8]}"
    make_databases(wire_server, name)
    app = spawn(SIM_USER="alice", SIM_DB=wire_server)
    app.menu(MAIN, "Info")
    app.menu("Which database?", name)
    app.expect("database name")
    app.expect(name)
    app.menu(MAIN, "Exit")
    app.finish()
