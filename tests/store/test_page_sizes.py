"""A new embedded store makes its conversations' file with pages that hold several of them."""

from __future__ import annotations

import sqlite3

from simulator.store.database import open_database, use_database


def _page_size(path) -> int:
    with sqlite3.connect(path) as connection:
        return connection.execute("PRAGMA page_size").fetchone()[0]


def _touch(connection, *collections: str) -> None:
    for name in collections:
        connection.db[name].insert_one({"_id": f"{name}_1", "text": "x" * 2100})


def test_new_store_conversations_get_16_kb_pages_and_the_rest_4_kb(tmp_path):
    connection = open_database(str(tmp_path), "lab")
    try:
        _touch(connection, "conversations", "messages")
        assert connection.db["conversations"].find_one({"_id": "conversations_1"})["text"]
    finally:
        connection.close()
    assert _page_size(tmp_path / "lab" / "conversations") == 16_384
    assert _page_size(tmp_path / "lab" / "messages") == 4_096
    with sqlite3.connect(tmp_path / "lab" / "conversations") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_made_before_keeps_its_pages(tmp_path):
    (tmp_path / "lab").mkdir()
    with sqlite3.connect(tmp_path / "lab" / "conversations") as raw:  # as litemongo made it
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute("CREATE TABLE kept(x)")
    connection = open_database(str(tmp_path), "lab")
    try:
        _touch(connection, "conversations")
        assert connection.db["conversations"].count_documents({}) == 1
    finally:
        connection.close()
    assert _page_size(tmp_path / "lab" / "conversations") == 4_096


def test_another_database_of_the_store_gets_them_too(tmp_path):
    connection = open_database(str(tmp_path), "lab")
    try:
        use_database(connection, "second")
        _touch(connection, "conversations")
    finally:
        connection.close()
    assert _page_size(tmp_path / "second" / "conversations") == 16_384


def test_a_folder_it_cannot_write_gets_the_stores_own_answer(tmp_path, monkeypatch):
    """Making the file first adds no error of its own: the store says what it always said."""
    from simulator.store import page_sizes

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(page_sizes.sqlite3, "connect", refuse)
    page_sizes.prepare(tmp_path, "lab")  # nothing raised, nothing made
    assert not (tmp_path / "lab" / "conversations").exists()


def test_a_large_sweep_into_a_store_with_4_kb_pages_is_told_how_to_convert_it(tmp_path):
    from simulator.services.sweeps import EMBEDDED_COMFORT, embedded_scale_note
    from simulator.store.store import open_store

    (tmp_path / "old").mkdir()
    with sqlite3.connect(tmp_path / "old" / "conversations") as raw:  # as litemongo made it
        raw.execute("PRAGMA journal_mode=WAL")
    for name, told in (("old", True), ("new", False)):
        store = open_store(open_database(str(tmp_path), name))
        try:
            note = embedded_scale_note(store, EMBEDDED_COMFORT)
            assert note is not None and note.startswith("note: this sweep has 20,000")
            assert ("4 KB pages" in note and "16 KB pages" in note) == told
            assert embedded_scale_note(store, EMBEDDED_COMFORT - 1) is None
        finally:
            store.close()
