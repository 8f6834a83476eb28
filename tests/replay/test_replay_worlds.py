"""Replay through the services on the loopback stub and the embedded store: a chat and a grid
run replay identically as new runs linked to their originals (which stay as they were; every
world's replay through the command line: tests/contract); one changed reply is named with its
diff; another model identity is refused before anything is stored, and kept as a warning under
--force."""

from __future__ import annotations

import pytest
from replay_helpers import PromptReplies, ledger, replay, run_chat, run_grid

from simulator.errors import UserError
from simulator.testing import StubLLMServer


@pytest.fixture
def replies():
    return PromptReplies()


@pytest.fixture
def stub(monkeypatch, replies):
    with StubLLMServer(models=["stub", "other"]) as server:
        server.reply_fn = replies
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        yield server


def _snapshot(store, run_id):
    doc = store.conversations.get(run_id)
    return {k: v for k, v in doc.items() if k != "favourite"}, ledger(store, run_id)


def test_a_chat_replays_identically_as_a_new_linked_run(embedded, stub, replies):
    original = run_chat(embedded)
    before = _snapshot(embedded, original)
    replies.restart()
    result = replay(embedded, original)

    verdict = result.verdict
    assert verdict.identical and verdict.divergence is None and verdict.caveat is None
    assert verdict.original_calls == verdict.compared == len(ledger(embedded, original)) >= 4
    assert verdict.headline().startswith("identical: all ")
    new = embedded.conversations.get(result.outcome.conversation_id)
    assert new["_id"] != original and new["replay_of"] == original and new["status"] == "done"
    old = embedded.conversations.get(original)
    assert new["spec"] == old["spec"] and new["experiment"] == old["experiment"]
    assert new["replay_llm"] is None and new["replay_warnings"] == []
    assert ledger(embedded, new["_id"]) == ledger(embedded, original)
    assert _snapshot(embedded, original) == before  # the original untouched


def test_one_changed_reply_is_the_first_divergence_with_a_diff(embedded, stub, replies):
    original = run_chat(embedded)
    replies.restart(change_at=2)  # the replay's second request answers otherwise
    result = replay(embedded, original)

    verdict = result.verdict
    assert not verdict.identical and verdict.compared == 1
    first = verdict.divergence
    rows = sorted(embedded.calls.for_conversation(original), key=lambda r: r["seq"])
    second = [r for r in rows if r["state"] == "done"][1]
    assert (first.purpose, first.day, first.index) == (
        second["purpose"],
        second["day"],
        second["index"],
    )
    assert first.what == "reply" and first.original_seq == second["seq"]
    assert f"-{second['response']}" in first.diff
    assert "+CHANGED: I will not say what I said before." in first.diff
    assert verdict.to_json()["verdict"] == "diverged"
    assert "differs (same prompt)" in verdict.headline()


def test_a_grid_run_replays(embedded, stub, replies):
    original = run_grid(embedded)
    replies.restart()
    result = replay(embedded, original)
    assert result.verdict.identical, result.verdict.divergence
    assert result.verdict.original_calls == len(ledger(embedded, original)) > 6
    # an OpenAI-compatible server: no identity before a call, and no promise of determinism
    assert "OpenAI-compatible server" in result.verdict.caveat
    assert any("not checked before the run" in n for n in result.plan.notes)
    new = embedded.conversations.get(result.outcome.conversation_id)
    assert new["kind"] == "grid" and new["replay_of"] == original
    steps = [(s["agent"], s["step"], s["move"]) for s in embedded.grid_steps.for_run(new["_id"])]
    olds = [(s["agent"], s["step"], s["move"]) for s in embedded.grid_steps.for_run(original)]
    assert sorted(steps) == sorted(olds) and len(steps) == 6


def _tamper_identity(store, run_id):
    """As if the model's weights changed since the run: another digest on its ledger."""
    calls = store.db["calls"]
    for row in calls.find({"conversation_id": run_id}):
        identity = dict(row.get("model_identity") or {}, digest="sha256:" + "0" * 64)
        calls.update_one({"_id": row["_id"]}, {"$set": {"model_identity": identity}})


def test_another_model_identity_is_refused_and_forced(embedded, stub, replies):
    original = run_chat(embedded)
    _tamper_identity(embedded, original)
    runs = embedded.conversations.count(None, None)
    with pytest.raises(UserError) as refused:
        replay(embedded, original)
    message = str(refused.value)
    assert "not the one" in message and "--force" in message and "nothing was stored" in message
    assert embedded.conversations.count(None, None) == runs

    replies.restart()
    result = replay(embedded, original, force=True)
    new = embedded.conversations.get(result.outcome.conversation_id)
    assert new["replay_of"] == original and len(new["replay_warnings"]) == 1
    assert "(--force)" in new["replay_warnings"][0]
    assert result.verdict.identical  # same stub replies: only the record differs


def test_a_replay_on_another_model_says_so(embedded, stub, replies):
    original = run_chat(embedded)
    with pytest.raises(UserError, match="ollama:other"):
        replay(embedded, original, llm="ollama:other")
    replies.restart()
    result = replay(embedded, original, llm="ollama:other", force=True)
    new = embedded.conversations.get(result.outcome.conversation_id)
    assert new["replay_llm"] == "ollama:other"
    assert any("--llm" in note for note in new["replay_notes"])
    assert {a["model"] for a in new["agents"]} == {"ollama:other"}
    rows = embedded.calls.for_conversation(new["_id"])
    assert {r["model"] for r in rows} == {"ollama:other"}


def test_an_unfinished_run_is_refused(embedded, stub):
    original = run_chat(embedded)
    embedded.conversations.set_status(original, "interrupted", None, None, {})
    with pytest.raises(UserError, match="interrupted"):
        replay(embedded, original)
