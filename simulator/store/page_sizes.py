"""The page size of an embedded store's file, chosen when the file is made.

SQLite fixes a file's page size when its first page is written and keeps it (a file in WAL
mode cannot change it). litemongo makes every collection's file with 4 KB pages, and a
conversation document of a prison sweep is about 2.1 KB: two do not fit in one page, so each
takes a page of its own, written twice (the write-ahead log, then the file). In pages of 16 KB
seven fit: a sweep of 1,000,000 makes a 2.7 GB file instead of 3.7 GB and writes 8 GB instead
of 13. Collections of small or few documents keep 4 KB. A file made before keeps its pages.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from simulator.store.embedded import table_of

PAGE_BYTES = {"conversations": 16_384}


def prepare(folder: Path, db_name: str) -> None:
    """Make the files of PAGE_BYTES's collections that do not exist yet, empty, in WAL mode
    (as litemongo opens them) with their page size; litemongo then creates its tables there."""
    for collection, size in PAGE_BYTES.items():
        path = folder / db_name / collection
        if path.exists():
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.closing(sqlite3.connect(path)) as connection:
                connection.execute(f"PRAGMA page_size = {size}")
                connection.execute("PRAGMA journal_mode=WAL")  # writes page 1: size fixed
        except (OSError, sqlite3.Error):  # a folder it cannot write: litemongo says so
            continue


def short_pages(collection: object) -> int | None:
    """The page size of an embedded collection's file when it is below what PAGE_BYTES gives a
    new one (a file made by an earlier version), else None (also on a server)."""
    table = table_of(collection)
    wanted = PAGE_BYTES.get(getattr(collection, "name", ""))
    if table is None or wanted is None:
        return None
    size = table._connection.execute("PRAGMA main.page_size").fetchone()[0]
    return size if size < wanted else None
