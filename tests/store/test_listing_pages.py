"""`llm-sim conversation list` answers one page: the newest 50 (favourites first), `--limit N`
or `--all`, and says "showing 50 of 60 (--all for every one)" when the page is not everything.
The menu's conversation picker shows the same page with a "Show more" choice."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest

from simulator.cli.context import AppContext
from simulator.cli.interactive import conversation_menu
from simulator.store.store import open_store_uri

BASE = datetime(2025, 1, 1, 12, 0, 0)
SPEC = {
    "agents": {"Guard": 1, "Prisoner": 1},
    "total_messages": 4,
    "days": 1,
    "speaker_method": "round_robin",
}


def seed(db: str, count: int, experiment_id: str = "exp_aaaaaa", start: int = 0) -> list[str]:
    """`count` conversations one minute apart; returns their ids, oldest first."""
    store = open_store_uri(db)
    try:
        ids = []
        for i in range(start, start + count):
            doc = store.conversations.create(
                {
                    "experiment_id": experiment_id,
                    "owner": "alice" if i % 2 == 0 else "bob",
                    "spec": SPEC,
                    "created_at": BASE + timedelta(minutes=i),
                }
            )
            ids.append(doc["_id"])
        return ids
    finally:
        store.close()


@pytest.fixture
def db(tmp_path) -> str:
    return str(tmp_path / "store")


@pytest.fixture
def sim(tmp_path, monkeypatch, run_cli):
    """`sim("conversation", "list", db=..., user=...)` through the real main(), in-process."""
    monkeypatch.chdir(tmp_path)

    def run(*args: str, db: str, user: str = "alice", env: dict | None = None):
        return run_cli(list(args), env={"SIM_DB": db, "SIM_USER": user, **(env or {})})

    return run


def listed(sim, db: str, *args: str, user: str = "alice"):
    result = sim("conversation", "list", "--json", *args, db=db, user=user)
    assert result.code == 0, result.err
    return [d["_id"] for d in result.json()], " ".join(result.err.split())


def test_the_default_page_is_the_newest_fifty_and_says_how_many_there_are(sim, db):
    ids = seed(db, 60)
    shown, err = listed(sim, db)
    assert shown == ids[::-1][:50]  # newest first
    assert "showing 50 of 60 (--all for every one)" in err


def test_limit_and_all(sim, db):
    ids = seed(db, 12)
    shown, err = listed(sim, db, "--limit", "5")
    assert shown == ids[::-1][:5]
    assert "showing 5 of 12 (--all for every one)" in err
    shown, err = listed(sim, db, "--all")
    assert shown == ids[::-1]
    assert "showing" not in err


def test_a_page_that_holds_everything_says_nothing_more(sim, db):
    ids = seed(db, 3)
    shown, err = listed(sim, db, "--limit", "3")
    assert shown == ids[::-1] and "showing" not in err


def test_the_line_is_printed_under_the_table(sim, db):
    seed(db, 4)
    result = sim("conversation", "list", "--limit", "2", db=db, env={"COLUMNS": "200"})
    assert result.code == 0, result.err
    lines = [line for line in result.out.splitlines() if line.strip()]
    assert lines[-1] == "showing 2 of 4 (--all for every one)"


def test_favourites_come_first_within_the_page(sim, db):
    ids = seed(db, 60)
    oldest = ids[0]
    assert sim("conversation", "favourite", oldest, db=db).code == 0
    shown, err = listed(sim, db)
    assert shown[0] == oldest and shown[1:] == ids[::-1][:49]
    assert "showing 50 of 60" in err
    shown, _ = listed(sim, db, "--limit", "1")
    assert shown == [oldest]
    # bob has no favourites: his page is the plain newest fifty
    shown, _ = listed(sim, db, user="bob")
    assert shown == ids[::-1][:50]


def test_filters_page_and_count_what_they_keep(sim, db):
    seed(db, 10, "exp_aaaaaa")
    others = seed(db, 8, "exp_bbbbbb", start=10)
    shown, err = listed(sim, db, "--experiment", "exp_bbbbbb", "--limit", "3")
    assert shown == others[::-1][:3]
    assert "showing 3 of 8" in err
    shown, err = listed(sim, db, "--mine", "--limit", "2")  # alice owns the even ones: 9 of 18
    assert len(shown) == 2 and "showing 2 of 9" in err


def test_conversations_created_in_the_same_moment_page_without_overlap(db):
    store = open_store_uri(db)
    try:
        for _ in range(7):
            store.conversations.create(
                {"experiment_id": "exp_aaaaaa", "owner": "alice", "spec": SPEC, "created_at": BASE}
            )
        first = [d["_id"] for d in store.conversations.page(limit=4)]
        rest = [d["_id"] for d in store.conversations.page(limit=10, exclude=set(first))]
        every = [d["_id"] for d in store.conversations.page(limit=None)]
    finally:
        store.close()
    assert len(set(first + rest)) == 7 and every == sorted(every, reverse=True)
    # which of a tie a page boundary keeps is the store's choice; the page's order is not
    assert first == sorted(first, reverse=True) and rest == sorted(rest, reverse=True)


@pytest.mark.parametrize("bad", ["0", "-3"])
def test_a_limit_below_one_is_refused(sim, db, bad):
    seed(db, 2)
    result = sim("conversation", "list", "--limit", bad, db=db)
    assert result.code == 2
    text = " ".join(result.err.split())
    assert "--limit" in text and "give a positive number" in text


def test_limit_with_all_is_refused(sim, db):
    result = sim("conversation", "list", "--limit", "5", "--all", db=db)
    assert result.code == 2
    assert "--limit N for the newest N, or --all" in " ".join(result.err.split())


def test_the_menu_picker_shows_a_page_and_more_on_request(db, monkeypatch):
    ids = seed(db, 60)
    asked: list[list[tuple[str, str]]] = []
    answers = iter([conversation_menu.MORE, ""])  # "Show more", then Back

    def select(question, choices, *a, **k):
        asked.append(list(choices))
        return next(answers)

    monkeypatch.setattr(conversation_menu.ask, "select", select)
    app = AppContext(db_flag=db, user_flag="alice")
    try:
        conversation_menu.browse(app, SimpleNamespace(id="exp_aaaaaa"))
    finally:
        app.store.close()
    first, second = asked
    assert [value for _, value in first[:50]] == ids[::-1][:50]
    assert first[50] == ("Show 10 more (50 of 60 shown)", conversation_menu.MORE)
    assert first[51][0] == "Back" and len(first) == 52
    assert [value for _, value in second[:60]] == ids[::-1]
    assert second[60][0] == "Back" and len(second) == 61


def test_pages_and_counts_on_every_store(store):
    """The same page, order and count on mongomock, the embedded store and nx-27017."""
    ids = []
    for i in range(9):
        doc = store.conversations.create(
            {
                "experiment_id": "exp_aaaaaa" if i % 3 else "exp_bbbbbb",
                "owner": "alice",
                "spec": SPEC,
                "created_at": BASE + timedelta(minutes=i // 2),  # pairs share a minute
            }
        )
        ids.append(doc["_id"])
    every = [d["_id"] for d in store.conversations.page(limit=None)]
    assert sorted(every) == sorted(ids)
    keys = [(ids.index(i) // 2, i) for i in every]
    assert keys == sorted(keys, reverse=True)  # newest first, ties by id
    first = [d["_id"] for d in store.conversations.page(limit=5)]  # pairs: no tie is cut
    assert first == every[:5]
    starred = {ids[0], ids[1]}
    assert [d["_id"] for d in store.conversations.page(limit=5, only=starred)] == [
        i for i in every if i in starred
    ]
    rest = [d["_id"] for d in store.conversations.page(limit=3, exclude=starred)]
    assert rest == [i for i in every if i not in starred][:3]
    assert store.conversations.count() == 9
    assert store.conversations.count(experiment_id="exp_bbbbbb") == 3
    page = store.conversations.page(experiment_id="exp_bbbbbb", limit=2)
    assert [d["_id"] for d in page] == [i for i in every if i in {ids[0], ids[3], ids[6]}][:2]
    assert all(d["spec"] == SPEC for d in page)  # whole documents, not the projection
