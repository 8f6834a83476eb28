"""Forks and imports: an edit past the limit, non-text message content in a reference database,
and who may delete a conversation that colleagues forked.

Before: `conversation fork --edit` took 10 MB; `import reference --strict` stored `{"$gt": 1}`
as a message's text ("{'$gt': 1}"); a colleague's fork kept the owner from deleting their own
conversation, and nothing but the fork's owner could remove it.
"""

from __future__ import annotations

import json

import pytest

from simulator.domain.limits import MAX_EDIT_CHARS
from simulator.store.database import open_database
from simulator.testing.reference_fixture import build_prison_database

from .conftest import refused, unchanged
from .harness import fingerprint

REF_DB = "llm_interaction_simulator"


def run_chat(cli, db: str, experiment_id: str) -> str:
    made = cli(
        "run", experiment_id, "--agents", "guard=1,prisoner=1", "--messages", "4",
        "--llm", "mock:a", "--json", db=db,
    )  # fmt: skip
    assert made.code == 0, made.describe()
    return json.loads(made.out)["conversation_id"]


def fork(cli, db: str, conversation_id: str, at: str, user: str) -> str:
    made = cli(
        "conversation", "fork", conversation_id, "--at", at, "--json", db=db, env={"SIM_USER": user}
    )
    assert made.code == 0, made.describe()
    return json.loads(made.out)["conversations"][0]["conversation_id"]


def conversation_ids(cli, db: str) -> set[str]:
    listed = cli("conversation", "list", "--all", "--json", db=db)
    return {c["_id"] for c in json.loads(listed.out)}


# ---- 4. the size of an edit -----------------------------------------------------------------


def test_an_edit_past_the_limit_is_refused_naming_it(cli, db, experiment_id):
    parent = run_chat(cli, db, experiment_id)
    before = fingerprint(db)
    for size in (MAX_EDIT_CHARS + 1, 10_000_000):
        result = cli("conversation", "fork", parent, "--at", "1:2", "--edit", "x" * size, db=db)
        refused(result, "--edit", f"{size:,} characters", f"{MAX_EDIT_CHARS:,}")
    unchanged(db, before)
    kept = cli("conversation", "fork", parent, "--at", "1:2", "--edit", "y" * MAX_EDIT_CHARS, db=db)
    assert kept.code == 0, kept.describe()


# ---- 8. non-text message content in a reference database ------------------------------------


@pytest.fixture
def reference(tmp_path):
    """A reference database (embedded) whose one-day conversation has a message with `bad`
    content; yields (path, conversation id, message id, put) where put(value) sets it."""
    path = str(tmp_path / "reference")
    conn = open_database(path, REF_DB)
    ids = build_prison_database(conn.db)
    conversation = conn.db.conversations.find_one({"_id": ids["one_day"]})
    message = conversation["messages_ids"][2]

    def put(value) -> None:
        conn.db.messages.update_one({"_id": message}, {"$set": {"content": value}})

    yield path, str(ids["one_day"]), str(message), put
    conn.close()


@pytest.mark.parametrize("bad", [{"$gt": 1}, ["a", "b"], 42, None])
def test_strict_import_refuses_non_text_message_content(cli, db, reference, bad):
    source, conversation, message, put = reference
    put(bad)
    importing = ("import", "reference", "--from", source, "--db-name", REF_DB)
    result = cli(*importing, "--strict", "--yes", db=db)
    refused(result, "--strict", conversation, f"the content of message {message} is")
    assert "not text" in result.err
    assert conversation_ids(cli, db) == set()
    assert json.loads(cli("experiment", "list", "--json", db=db).out) == []


def test_a_plain_import_skips_that_conversation_and_says_why(cli, db, reference):
    source, conversation, _message, put = reference
    put({"$gt": 1})
    importing = ("import", "reference", "--from", source, "--db-name", REF_DB)
    result = cli(*importing, "--yes", "--json", db=db)
    assert result.code == 0, result.describe()
    report = json.loads(result.out)
    [skipped] = report["skipped"]
    assert skipped["source_id"] == conversation
    assert "dict {'$gt': 1}, not text" in skipped["reason"]
    assert report["counts"]["conversations"]["imported"] == 3
    imported = conversation_ids(cli, db)
    assert f"conv_ref_{conversation}" not in imported and len(imported) == 3
    for cid in imported:
        shown = json.loads(cli("conversation", "show", cid, "--json", db=db).out)
        assert all(isinstance(m["text"], str) and "$gt" not in m["text"] for m in shown["messages"])


# ---- 9. deleting a conversation that colleagues forked -------------------------------------


@pytest.fixture
def family(cli, db, experiment_id):
    """alice's conversation, bob's fork of it, and alice's own fork of bob's fork."""
    parent = run_chat(cli, db, experiment_id)
    bobs = fork(cli, db, parent, "1:2", "bob")
    alices = fork(cli, db, bobs, "1:3", "alice")
    return parent, bobs, alices


def test_the_owner_is_told_whose_forks_block_and_how_to_delete_them(cli, db, family):
    parent, bobs, alices = family
    before = fingerprint(db)
    result = cli("conversation", "delete", parent, "--yes", db=db)
    refused(result, "--with-forks", "2 forks", f"bob's {bobs}", f"your {alices}", "bob may delete")
    unconfirmed = cli("conversation", "delete", parent, "--with-forks", db=db)  # no terminal
    refused(unconfirmed, "--yes", f"Delete {parent} and its 2 forks", f"bob's {bobs}")
    unchanged(db, before)


def test_the_owner_deletes_the_conversation_with_every_fork(cli, db, family):
    parent, bobs, alices = family
    done = cli("conversation", "delete", parent, "--with-forks", "--yes", db=db)
    assert done.code == 0, done.describe()
    said = " ".join(done.out.split())
    assert f"Deleted {parent} and its 2 forks (bob's {bobs} and your {alices})" in said
    assert conversation_ids(cli, db) == set()


def test_nobody_deletes_a_colleagues_conversation_or_fork_on_its_own(cli, db, family):
    parent, bobs, _alices = family
    before = fingerprint(db)
    as_bob = {"SIM_USER": "bob"}
    refused(
        cli("conversation", "delete", parent, "--with-forks", "--yes", db=db, env=as_bob), "alice"
    )
    result = cli("conversation", "delete", bobs, "--yes", db=db)  # alice, bob's fork
    refused(result, "belongs to 'bob'", f"llm-sim conversation delete {parent} --with-forks")
    unchanged(db, before)


def test_a_forks_owner_deletes_their_fork(cli, db, family):
    parent, bobs, alices = family
    as_bob = {"SIM_USER": "bob"}
    blocked = cli("conversation", "delete", bobs, "--yes", db=db, env=as_bob)
    refused(blocked, f"alice's {alices}", "--with-forks")
    done = cli("conversation", "delete", bobs, "--with-forks", "--yes", db=db, env=as_bob)
    assert done.code == 0, done.describe()
    assert conversation_ids(cli, db) == {parent}
    shown = cli("conversation", "show", parent, "--json", db=db)
    assert len(json.loads(shown.out)["messages"]) == 4  # the parent keeps its transcript
