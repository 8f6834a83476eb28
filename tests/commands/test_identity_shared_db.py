"""On a shared MongoDB the acting user is the authenticated database user; --user/SIM_USER may not
claim another name there. Without credentials in the URI (and on the embedded store) the name is
a label, and `info` says so.

nx-27017 (the wire server the tests use) has no users and no authentication (it answers no SASL
command, so pymongo's login fails), so the refusal is tested with URIs that carry a user name at
the resolve level and on the AppContext every command uses (which resolves the user from the URI
alone); the unauthenticated case runs against nx-27017 itself.
"""

from __future__ import annotations

import pytest

from simulator.cli.context import AppContext
from simulator.errors import UserError
from simulator.identity import resolve_user

MESSAGE = (
    "on a shared MongoDB you act as the database user 'alice'; --user bob is for the embedded store"
)


def test_database_user_wins_and_another_claim_is_refused(monkeypatch):
    assert resolve_user(None, "alice", server=True) == "alice"
    assert resolve_user("alice", "alice", server=True) == "alice"  # the same name: fine
    with pytest.raises(UserError) as caught:
        resolve_user("bob", "alice", server=True)
    assert MESSAGE in caught.value.render()
    assert caught.value.exit_code == 2
    monkeypatch.setenv("SIM_USER", "bob")
    with pytest.raises(UserError, match="SIM_USER bob is for the embedded store"):
        resolve_user(None, "alice", server=True)
    with pytest.raises(UserError, match="SIM_USER bob is for the embedded store"):
        resolve_user("bob", "alice", server=True)  # click passes SIM_USER in as the flag too


def test_without_credentials_or_on_the_embedded_store_the_name_is_a_label():
    assert resolve_user("bob", None, server=True) == "bob"
    assert resolve_user("bob", None, server=False) == "bob"


def test_every_command_context_refuses_the_claim_without_connecting(monkeypatch):
    """The AppContext every command and the menu use: the user is resolved from the URI alone,
    so the refusal needs no server (nothing listens on port 9)."""
    uri = "mongodb://alice:secret@127.0.0.1:9/"
    with pytest.raises(UserError) as caught:
        _ = AppContext(db_flag=uri, user_flag="bob").user
    assert MESSAGE in caught.value.render() and "secret" not in caught.value.render()
    assert AppContext(db_flag=uri, user_flag="alice").user == "alice"
    assert AppContext(db_flag=uri).user == "alice"
    monkeypatch.setenv("DB_CLUSTER_URL", "127.0.0.1:9")
    monkeypatch.setenv("DB_USER", "carol")
    monkeypatch.setenv("DB_PASSWORD", "pw")
    with pytest.raises(UserError, match="database user 'carol'; --user bob"):
        _ = AppContext(user_flag="bob").user  # DB_USER is the database user too


def test_unauthenticated_server_accepts_the_name_and_says_it_is_a_label(sim, wire_server):
    data = sim("--user", "bob", "info", "--json", db=wire_server, user=None).json()
    assert data["store_kind"] == "mongodb"
    assert data["user"] == "bob"
    assert data["user_identity"] == "a label; the server did not authenticate a user"
    text = sim("--user", "bob", "info", db=wire_server, user=None).out
    assert "a label; the server did not authenticate a user" in " ".join(text.split())


def test_embedded_store_says_the_name_is_a_label(sim):
    data = sim("--user", "bob", "info", "--json", user=None).json()
    assert data["user"] == "bob"
    assert data["user_identity"] == "a label on the embedded store, not a login"
