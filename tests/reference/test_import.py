"""`import reference` service: a database in the reference tool's exact shapes, converted and
written as this tool's own documents, without changing a byte of the source."""

from __future__ import annotations

import uuid

import pytest
from bson import ObjectId

from simulator.domain import reference_conversion as rc
from simulator.errors import UserError
from simulator.services import experiments as experiments_service
from simulator.services import reference_import as service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing.reference_fixture import (
    PRIVATE,
    SHARED,
    build_prison_database,
    reference_hashes,
    section_doc,
)
from simulator.worlds.chat.prompting.assembly import render_all


@pytest.fixture
def source(store_uri):
    """The reference's database beside the target (another database on the same server)."""
    name = f"ref_{uuid.uuid4().hex[:8]}"
    connection = open_database(store_uri, name)
    ids = build_prison_database(connection.db)
    yield store_uri, name, connection.db, ids
    connection.close()


def run_import(store, uri: str, name: str, dry_run: bool = False) -> service.ImportPlan:
    connection = service.open_source(uri, name)
    try:
        plan = service.plan(store, connection, name)
    finally:
        connection.close()
    return plan if dry_run else service.apply(store, plan)


def counts(plan: service.ImportPlan) -> dict:
    return {row: vars(tally) for row, tally in plan.tallies.items()}


def test_import_leaves_the_source_unchanged_and_a_second_import_adds_nothing(store, source):
    uri, name, db, _ = source
    before = reference_hashes(db)
    assert len(before) == 2 + 4 + 56

    first = run_import(store, uri, name)
    assert counts(first) == {
        "experiments": {"found": 2, "imported": 2, "present": 0, "skipped": 0},
        "conversations": {"found": 4, "imported": 4, "present": 0, "skipped": 0},
        "messages": {"found": 56, "imported": 56, "present": 0, "skipped": 0},
    }
    assert reference_hashes(db) == before
    stored = {
        "experiments": len(store.experiments.list()),
        "conversations": len(store.conversations.list()),
        "messages": sum(store.messages.count(c["_id"]) for c in store.conversations.list()),
    }
    assert stored == {"experiments": 2, "conversations": 4, "messages": 51}

    second = run_import(store, uri, name)
    assert counts(second)["experiments"] == {"found": 2, "imported": 0, "present": 2, "skipped": 0}
    assert counts(second)["conversations"]["imported"] == 0
    assert counts(second)["messages"] == {"found": 56, "imported": 0, "present": 56, "skipped": 0}
    assert len(store.experiments.list()) == 2 and len(store.conversations.list()) == 4
    assert reference_hashes(db) == before


def test_imported_experiment_keeps_source_owner_and_dates_and_converts_its_texts(store, source):
    uri, name, _, ids = source
    run_import(store, uri, name)
    alice = store.experiments.get(f"exp_ref_{ids['alice']}")
    assert alice["owner"] == "alice"
    assert alice["source"] == {
        "tool": "llm_interaction_simulator",
        "id": str(ids["alice"]),
        "db": name,
    }
    assert alice["created_at"].isoformat() == "2024-05-02T09:30:15.250000"
    view = experiments_service.get(store, alice["_id"], "alice")
    experiment = view.experiment
    assert view.experiment.favourite  # the reference's flag became alice's favourite
    assert [
        (c.model, c.label, c.params.temperature, c.params.num_ctx) for c in experiment.llms
    ] == [
        ("ollama:llama3:latest", "llama3 t=0.7", 0.7, 10_000),
        ("ollama:llama3:latest", "llama3 t=1.0", 1.0, 10_000),
    ]
    guard = experiment.role("guard")
    # the reference's render order: starting prompt, private by index, then shared by index
    assert [s.title for s in guard.sections] == ["Starting prompt", "Goal", "Personality"]
    assert [s.title for s in experiment.shared_sections] == ["Environment", "Communication rules"]
    assert "<GUARD_VERB_MAKES>" in guard.sections[1].content
    prisoner = experiment.role("prisoner")
    assert "<PRISONER_POSS_PRON>" in prisoner.sections[1].content
    assert "<PRISONER_VERB_WANTS>" in prisoner.sections[1].content
    rendered = render_all(experiment, {"guard": 2, "prisoner": 1})
    assert "The guards make sure" in rendered["guard"]
    assert "The prisoner wants an extra hour" in rendered["prisoner"]
    assert "The prison holds 3 people" in rendered["prisoner"]
    one = render_all(experiment, {"guard": 1, "prisoner": 2})
    assert "The guard makes sure" in one["guard"]
    assert "The prisoners want an extra hour" in one["prisoner"]
    bob = experiments_service.get(store, f"exp_ref_{ids['bob']}", "bob").experiment
    assert [(c.model, c.label, c.params.num_ctx) for c in bob.llms] == [
        ("openai:gpt-4o-mini", None, None)
    ]


def test_imported_conversation_holds_turns_openings_and_the_day_summary(store, source):
    uri, name, db, ids = source
    run_import(store, uri, name)
    one = store.conversations.get(f"conv_ref_{ids['one_day']}")
    assert one["key"] == f"ref-{ids['one_day']}" and one["status"] == "done"
    assert one["spec"]["total_messages"] == 20 and one["spec"]["message_counting"] == "reference"
    assert one["spec"]["role_llms"]["guard"]["label"] == "llama3 t=0.7"
    messages = store.messages.for_conversation(one["_id"])
    assert len(messages) == 19 == one["counters"]["messages"]  # the opening is not a turn
    source_turns = sorted(
        (
            m
            for m in db.messages.find(
                {"_id": {"$in": db.conversations.find_one({"_id": ids["one_day"]})["messages_ids"]}}
            )
            if m["role"] != "Researcher"
        ),
        key=lambda m: m["index"],
    )
    assert [(m["speaker"], m["text"]) for m in messages] == [
        (m["speaker"], m["content"]) for m in source_turns
    ]
    assert [m["seq"] for m in messages] == list(range(19))
    assert {m["role"] for m in messages} == {"guard", "prisoner"}
    assert [a["name"] for a in one["agents"]] == [
        source_turns[0]["speaker"],
        source_turns[1]["speaker"],
    ]
    assert one["openings"] == [{"day": 1, "text": "Start the experiment"}]

    two = store.conversations.get(f"conv_ref_{ids['two_days']}")
    assert two["day_split"] == [9, 9] and two["spec"]["days"] == 2
    assert two["spec"]["role_llms"]["guard"]["label"] == "llama3 t=1.0"
    assert [m["day"] for m in store.messages.for_conversation(two["_id"])] == [1] * 9 + [2] * 9
    summaries = store.conversations.summaries(two["_id"])
    assert [(s["day"], s["text"]) for s in summaries] == [
        (1, "The guards kept the rules; the prisoner asked for more yard time.")
    ]
    assert two["openings"][1]["text"].startswith("Start the experiment\nDay 1 summary:\n ")
    assert store.users.is_favourite("alice", "conversation", two["_id"])


def test_source_and_target_may_be_one_database(store_uri):
    """A researcher points the tool at the reference's own database and imports in place."""
    name = f"same_{uuid.uuid4().hex[:8]}"
    raw = open_database(store_uri, name)
    ids = build_prison_database(raw.db)
    before = reference_hashes(raw.db)
    store = open_store(open_database(store_uri, name))
    try:
        assert counts(run_import(store, store_uri, name))["conversations"]["imported"] == 4
        assert reference_hashes(raw.db) == before
        assert counts(run_import(store, store_uri, name))["conversations"]["present"] == 4
        assert reference_hashes(raw.db) == before
        assert store.experiments.get(f"exp_ref_{ids['alice']}")["owner"] == "alice"
    finally:
        store.close()
        raw.close()


def test_dry_run_writes_nothing(store, source):
    uri, name, db, _ = source
    before = reference_hashes(db)
    plan = run_import(store, uri, name, dry_run=True)
    assert counts(plan)["experiments"]["imported"] == 2
    assert store.experiments.list() == [] and store.conversations.list() == []
    assert store.db.messages.count_documents({}) == 0
    assert reference_hashes(db) == before


def test_broken_documents_are_reported_counted_and_refused_under_strict(store, source):
    uri, name, db, ids = source
    broken = db.experiments.insert_one({"_id": ObjectId(), "creator": "carol"}).inserted_id
    orphan = db.conversations.insert_one({"_id": ObjectId(), "n_messages": 2}).inserted_id
    lost = db.conversations.find_one({"_id": ids["lesson"]})["messages_ids"][2]
    db.messages.delete_one({"_id": lost})  # bob's conversation loses a message
    odd = db.conversations.insert_one({"_id": ObjectId(), "agent_combination": 3}).inserted_id
    listed = db.experiments.find_one({"_id": ids["alice"]})["conversation_ids"]
    # a conversation of an unexpected shape, listed by alice's experiment ($set, as the
    # reference's update_experiment wrote)
    db.experiments.update_one({"_id": ids["alice"]}, {"$set": {"conversation_ids": [*listed, odd]}})
    before = reference_hashes(db)

    plan = run_import(store, uri, name, dry_run=True)
    reasons = {s.source_id: s.reason for s in plan.skipped}
    assert "lacks starting_message, llms, roles, creation_date" in reasons[str(broken)]
    assert reasons[str(orphan)] == "no experiment lists it"
    assert reasons[str(ids["lesson"])].startswith("1 of its 6 messages are not in the messages")
    assert reasons[str(odd)].startswith("the conversation lacks n_messages")
    assert counts(plan)["experiments"] == {"found": 3, "imported": 2, "present": 0, "skipped": 1}
    assert counts(plan)["conversations"] == {"found": 6, "imported": 3, "present": 0, "skipped": 3}
    assert counts(plan)["messages"]["skipped"] == 6

    with pytest.raises(UserError, match="4 source documents cannot be imported"):
        service.check_strict(plan)
    assert store.experiments.list() == []
    service.apply(store, plan)  # without --strict the rest is imported
    assert len(store.conversations.list()) == 3
    assert reference_hashes(db) == before


def test_a_failure_mid_import_leaves_nothing_behind(store, source, monkeypatch):
    uri, name, _, _ = source
    plan = run_import(store, uri, name, dry_run=True)
    real_insert, calls = store.messages.insert, []

    def failing_insert(doc):
        calls.append(doc)
        if len(calls) == 30:  # the second conversation, half-way
            raise RuntimeError("disk full")
        return real_insert(doc)

    monkeypatch.setattr(store.messages, "insert", failing_insert)
    with pytest.raises(RuntimeError, match="disk full"):
        service.apply(store, plan)
    assert store.experiments.list() == [] and store.conversations.list() == []
    assert store.db.messages.count_documents({"schema_version": {"$exists": True}}) == 0
    assert store.db.summaries.count_documents({}) == 0
    monkeypatch.setattr(store.messages, "insert", real_insert)
    again = run_import(store, uri, name)  # and a later import completes it
    assert counts(again)["conversations"]["imported"] == 4


# ---- pure conversions ---------------------------------------------------------------------------


def test_placeholders_take_this_tools_names():
    notes: set[str] = set()
    tags = {"GUARD": "GUARD", "PRISONER": "PRISONER"}
    text = (
        "<GUARD_NOUN> <GUARD_VERB_MAKE> <GUARD_VERB_WATCH> <PRISONER_POSSPRON> <PRISONER_PRON> "
        "<PRISONER_POSS> <GUARD_NUM> <AGENTS_NUM> <ROLES_NUM> <GUARD_VERB_MADE>"
    )
    assert rc.convert_text(text, tags, notes) == (
        "<GUARD_NOUN> <GUARD_VERB_MAKES> <GUARD_VERB_WATCHES> <PRISONER_POSS_PRON> "
        "<PRISONER_PRON> <PRISONER_POSS> <GUARD_NUM> <AGENTS_NUM> <ROLES_NUM> <GUARD_VERB_MADE>"
    )
    assert "<GUARD_VERB_MAKE> (base form) became <GUARD_VERB_MAKES>" in notes


def test_model_strings_get_the_backend_the_reference_used():
    assert rc.convert_model("llama3:latest") == "ollama:llama3:latest"
    assert rc.convert_model("gpt-4o-mini") == "openai:gpt-4o-mini"
    assert rc.convert_model("orca2:13b") == "ollama:orca2:13b"


def test_same_model_entries_are_labelled_by_what_differs():
    notes: set[str] = set()
    llms = rc.convert_llms(
        [
            {"model": "llama3:latest", "temperature": 0.7, "top_k": 40, "top_p": 0.9},
            {"model": "llama3:latest", "temperature": 0.7, "top_k": 10, "top_p": 0.9},
            {"model": "orca2:latest", "temperature": 0.7, "top_k": 40, "top_p": 0.9},
        ],
        notes,
    )
    assert [c.label for _, c in llms] == [
        "llama3 t=0.7 top_k=40",
        "llama3 t=0.7 top_k=10",
        None,
    ]


def test_sections_follow_the_reference_sort():
    sections = [
        section_doc(4, "rules", "r", SHARED),
        section_doc(1, "environment", "e", SHARED),
        section_doc(3, "personality", "p", PRIVATE, "guard"),
        section_doc(0, "starting_prompt", "s", PRIVATE, "guard"),
        section_doc(2, "goal", "g", PRIVATE, "guard"),
    ]
    refs = rc.ref_sections(sections, "test", 0)
    assert [s.title for s in rc.reference_order(refs)] == [
        "Starting prompt",
        "Goal",
        "Personality",
        "Environment",
        "Rules",
    ]
