"""Forks through the services the CLI uses, on every store flavour: the prefix is shared (read
from the parent, never copied), an edit is marked in the transcript and the ledger, and the
continuation sees exactly the parent's transcript up to the fork point."""

from __future__ import annotations

import pytest
from fork_helpers import fork_and_run, parent_chat, prompt_reply

from simulator.domain.fork import EDIT_PURPOSE
from simulator.errors import UserError
from simulator.services import forks
from simulator.services import runs as run_service
from simulator.store import lineage
from simulator.testing import StubLLMServer
from simulator.worlds.chat.services import runs as conv_service

EDIT = "Stop. Nobody is punished today; let's talk about what happened."


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["a", "b", "c"]) as server:
        server.reply_fn = prompt_reply
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        yield server


def test_a_fork_at_1_3_shares_three_stored_messages_and_marks_the_edit(store, stub):
    parent = parent_chat(store)
    [fork] = fork_and_run(store, parent, "1:3", edit=EDIT)
    stored_by_parent = store.messages.for_conversation(parent)
    own = store.messages.for_conversation(fork)
    assert [m["index"] for m in own] == [3, 4, 5]  # nothing before the fork point is copied
    messages = conv_service.transcript(store, fork)["messages"]
    assert [m["_id"] for m in messages[:3]] == [m["_id"] for m in stored_by_parent[:3]]
    assert all(m["conversation_id"] == parent for m in messages[:3])
    edited = messages[3]
    assert edited["edited"] is True and edited["text"] == EDIT
    assert edited["original_text"] == stored_by_parent[3]["text"]
    assert edited["speaker"] == stored_by_parent[3]["speaker"]
    assert [m.get("edited", False) for m in messages[4:]] == [False, False]
    calls = store.calls.for_conversation(fork)
    [row] = [c for c in calls if c["purpose"] == EDIT_PURPOSE]
    assert row["response"] == EDIT and row["edited_from"] == stored_by_parent[3]["text"]
    assert row["model"] is None and (row["day"], row["index"]) == (1, 3)
    doc = store.conversations.get(fork)
    assert doc["fork_of"] == parent and doc["fork_at"] == {"day": 1, "index": 3}
    assert doc["counters"]["messages"] == 3  # its own: the edit and two turns
    assert doc["counters"]["calls"] == len(calls) - 1  # the edit called no model
    assert store.messages.count(parent) == 6  # the parent is untouched


def test_the_continuation_sees_the_parent_prefix_then_the_edit(store, stub):
    parent = parent_chat(store)
    [fork] = fork_and_run(store, parent, "1:3", edit=EDIT)
    shared = [m["text"] for m in store.messages.for_conversation(parent)[:3]]
    first = next(c for c in store.calls.for_conversation(fork) if c["purpose"] == "agent_turn")
    assert first["index"] == 4
    sent = "\n".join(m["content"] for m in store.calls.prompt(first["prompt_hash"]))
    positions = [sent.index(text) for text in [*shared, EDIT]]
    assert positions == sorted(positions)


def test_a_fork_without_changes_continues_as_its_parent_did(store, stub):
    """Same prefix, same seed, same model, replies that depend only on the prompt: the
    regenerated turns equal the parent's, so the prefix really is the parent's transcript."""
    parent = parent_chat(store)
    [fork] = fork_and_run(store, parent, "1:2")
    ours = [m["text"] for m in conv_service.transcript(store, fork)["messages"]]
    theirs = [m["text"] for m in store.messages.for_conversation(parent)]
    assert ours == theirs
    assert len(store.messages.for_conversation(fork)) == 4


def test_repetitions_get_their_own_seeds_and_another_model_changes_the_agents_only(store, stub):
    parent = parent_chat(store)
    ids = fork_and_run(store, parent, "1:3", edit=EDIT, llm="ollama:b", repetitions=3)
    docs = [store.conversations.get(i) for i in ids]
    assert [d["spec"]["seed"] for d in docs] == [5, 6, 7]
    assert [d["fork_repetition"] for d in docs] == [1, 2, 3]
    assert len({d["fork_group"] for d in docs}) == 1
    spec = docs[0]["spec"]
    assert {c["model"] for c in spec["role_llms"].values()} == {"ollama:b"}
    assert spec["summarizer_llm"]["model"] == "ollama:a"  # kept: noted as a default
    assert any("kept from the parent" in n for n in spec["defaults_applied"])
    assert any("seed: 5 (not given" in n for n in spec["defaults_applied"])
    for doc in docs:
        own = store.messages.for_conversation(doc["_id"])
        assert [m["model"] for m in own] == [None, "ollama:b", "ollama:b"]  # the edit, then b


def test_a_fork_on_a_later_day_shares_the_earlier_summaries_without_copying(store, stub):
    parent = parent_chat(store, messages=6, days=2)  # 3 turns a day
    [fork] = fork_and_run(store, parent, "2:1", edit=EDIT)
    assert [s["day"] for s in store.conversations.summaries(fork)] == [2]
    data = conv_service.transcript(store, fork)
    assert [s["day"] for s in data["summaries"]] == [1, 2]
    assert data["summaries"][0]["conversation_id"] == parent
    day_one = data["summaries"][0]["text"]
    turn = next(c for c in store.calls.for_conversation(fork) if c["purpose"] == "agent_turn")
    assert day_one in "\n".join(m["content"] for m in store.calls.prompt(turn["prompt_hash"]))


def test_a_fork_of_a_fork_reads_each_message_from_whoever_stored_it(store, stub):
    parent = parent_chat(store, messages=8)
    [child] = fork_and_run(store, parent, "1:2", edit=EDIT)
    [grandchild] = fork_and_run(store, child, "1:5", edit="Second edit.")
    messages = conv_service.transcript(store, grandchild)["messages"]
    owners = [m["conversation_id"] for m in messages]
    assert owners == [parent] * 2 + [child] * 3 + [grandchild] * 3
    assert messages[2]["text"] == EDIT and messages[5]["text"] == "Second edit."
    [earlier] = fork_and_run(store, child, "1:1")  # before the child's own fork point
    owners = [m["conversation_id"] for m in conv_service.transcript(store, earlier)["messages"]]
    assert owners == [parent] + [earlier] * 7
    assert [d["_id"] for d in lineage.children(store, child)] == [grandchild, earlier]
    from simulator.analysis.scope import family

    # one query for the experiment's fork links; depth first, each fork before its forks
    assert family(store, parent) == [parent, child, grandchild, earlier]
    assert family(store, child) == [child, grandchild, earlier]
    assert family(store, grandchild) == [grandchild]


@pytest.mark.parametrize(
    ("at", "changes", "words"),
    [
        ("1:6", {}, "day 1 holds messages 1:0 to 1:5"),
        ("2:0", {}, "it has no message on day 2"),
        ("one", {}, "--at: 'one' is not a message's place"),
        ("1:2", {"edit": "  "}, "--edit: the edited message is empty"),
        ("1:2", {"speaker": "manual"}, "--speaker: 'manual'"),
        ("1:2", {"variants": ["Guard/Nope=x"]}, "--variant: no section 'Guard/Nope'"),
        ("1:2", {"repetitions": 0}, "--repetitions: 0 repetitions"),
        ("1:2", {"llm": "nosuch"}, "--llm"),
    ],
)
def test_bad_forks_are_refused_before_anything_is_stored(store, stub, at, changes, words):
    parent = parent_chat(store)
    before = store.conversations.count()
    with pytest.raises(UserError) as refused:
        forks.plan(store, parent, at, **changes)
    assert words in str(refused.value)
    assert store.conversations.count() == before


def test_a_parent_with_forks_cannot_be_deleted_before_them(store, stub):
    from simulator.services import conversation_deletion

    parent = parent_chat(store)
    [fork] = fork_and_run(store, parent, "1:3", edit=EDIT)
    with pytest.raises(UserError, match=r"has 1 fork \(your conv_\w+\) that reads the first"):
        conversation_deletion.delete(store, parent, "alice")
    assert store.messages.count(parent) == 6
    conversation_deletion.delete(store, fork, "alice")
    conversation_deletion.delete(store, parent, "alice")
    assert store.conversations.count() == 0


def test_a_replay_of_a_fork_is_a_fork_of_the_same_parent_and_identical(store, stub):
    import asyncio

    from simulator.llm.access import LLMAccess
    from simulator.services import replays

    parent = parent_chat(store)
    [fork] = fork_and_run(store, parent, "1:3", edit=EDIT, llm="ollama:b")

    async def go():
        llms = LLMAccess()
        try:
            return await replays.replay(store, replays.plan(store, fork), llms, "alice")
        finally:
            await llms.aclose()

    result = asyncio.run(go())
    verdict = result.verdict
    assert verdict.divergence is None and verdict.caveat is None, verdict.to_json()
    assert verdict.headline().startswith("identical: all 4 calls")
    again = store.conversations.get(result.outcome.conversation_id)
    assert again["replay_of"] == fork and again["fork_of"] == parent
    assert again["fork_edit"]["text"] == EDIT
    assert [m["index"] for m in store.messages.for_conversation(again["_id"])] == [3, 4, 5]


def test_a_hand_picked_parent_needs_a_speaker_method_and_listings_count_shared_messages(
    store, stub
):
    import asyncio

    from fork_helpers import PRISON

    from simulator.cli.transcript_view import listing_row
    from simulator.llm.access import LLMAccess
    from simulator.services import experiments as exp_service

    view = exp_service.import_yaml(store, PRISON, "alice")
    spec = conv_service.build_spec(
        view, agents="guard=1,prisoner=1", total_messages=4, llm="ollama:a", speaker="manual"
    )

    async def go():
        llms = LLMAccess()
        try:
            doc = run_service.create_run(store, view, spec, "alice")
            names = iter(["Guard_1", "Prisoner_1"] * 2)
            return await conv_service.run(
                store, doc["_id"], llms, manual_input=lambda state: next(names)
            )
        finally:
            await llms.aclose()

    parent = asyncio.run(go()).conversation_id
    with pytest.raises(UserError, match="chose its speakers by hand") as refused:
        forks.plan(store, parent, "1:2")
    assert "--speaker round_robin" in str(refused.value)
    [fork] = fork_and_run(store, parent, "1:2", speaker="round_robin")
    assert listing_row(store.conversations.get(fork))["messages"] == "4/4"
