"""Streamed measures equal the in-memory computation they replace, number for number.

The reference below is the code `llm-sim measures` ran before it streamed (tables loaded
whole, one query per conversation, difflib on every pair), kept verbatim in spirit: the
streamed figures must be identical to it, not merely close.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import defaultdict
from difflib import SequenceMatcher

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stored_messages import message_doc

from simulator.analysis import tables as tables_mod
from simulator.analysis.cell_labels import cell_labels
from simulator.analysis.measures import (
    ID_COLUMNS,
    lcs_bound,
    mean_ci,
    message_measures,
    near_duplicate,
    normalise,
)
from simulator.analysis.prison_paper.measures import paper_tables
from simulator.analysis.scope import resolve_scope
from simulator.analysis.streaming import measure_scope
from simulator.analysis.tables import (
    _call_row,
    _score_rows,
    _summary_row,
    conversation_row,
    message_row,
    to_number,
)
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.worlds.chat.domain.sweep import SweepSpec

# --- the reference: the in-memory path as it was -----------------------------------------


def old_load_tables(store, scope) -> dict[str, list[dict]]:
    roles = [r["name"] for r in scope.experiment.get("roles", [])]
    tables: dict[str, list[dict]] = {n: [] for n in tables_mod.TABLES}
    cell_keys: dict[str, str] = {}
    for doc in store.sweeps.conversations(scope.id):
        row = conversation_row(doc, roles)
        cid = doc["_id"]
        cell_keys[cid] = row["cell_key"]
        tables["conversations"].append(row)
        for m in store.messages.for_conversation(cid):
            tables["messages"].append(message_row(m, row["cell_key"]))
        for s in store.conversations.summaries(cid):
            tables["summaries"].append(_summary_row(s, row["cell_key"]))
        for c in store.calls.for_conversation(cid):
            tables["calls"].append(_call_row(c, row["cell_key"]))
    scores = store.scores.for_conversations(scope.conversation_ids)
    scores.sort(
        key=lambda s: (s["conversation_id"], s["scorer"], s["target_id"], s.get("scored_by") or "")
    )
    for score in scores:
        tables["scores"].extend(_score_rows(score, cell_keys.get(score["conversation_id"])))
    return tables


def old_near_duplicate(a, b) -> bool:
    left, right = normalise(a)[:2000], normalise(b)[:2000]
    if not left or not right:
        return False
    if left == right:
        return True
    matcher = SequenceMatcher(None, left, right, autojunk=False)
    return matcher.quick_ratio() >= 0.9 and matcher.ratio() >= 0.9


def _mean(values):
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _group(rows, key="conversation_id"):
    grouped = defaultdict(list)
    for row in rows:
        grouped[row.get(key)].append(row)
    return grouped


def old_conversation_measures(tables):
    messages = _group(sorted(tables.get("messages", []), key=lambda m: m.get("seq") or 0))
    calls = _group(tables.get("calls", []))
    scores = _group(tables.get("scores", []))
    users = defaultdict(set)
    for row in tables.get("scores", []):
        users[row.get("scorer")].add(row.get("scored_by"))
    shared = {s for s, who in users.items() if len(who) > 1}
    conversations = tables.get("conversations", [])
    roles = list(
        dict.fromkeys(
            k.removeprefix("agents_") for c in conversations for k in c if k.startswith("agents_")
        )
    )
    rows = []
    for conv in conversations:
        cid = conv["conversation_id"]
        row = {k: conv.get(k) for k in ID_COLUMNS}
        row.update(old_message_part(messages.get(cid, []), roles))
        row["failed"] = int(conv.get("status") == "failed")
        conv_calls = calls.get(cid, [])
        row["calls"] = len(conv_calls)
        failures = sum(1 for c in conv_calls if c.get("error") is not None)
        row["call_failure_rate"] = failures / len(conv_calls) if conv_calls else None
        row["tokens_in"] = sum(c.get("tokens_in") or 0 for c in conv_calls)
        row["tokens_out"] = sum(c.get("tokens_out") or 0 for c in conv_calls)
        n = row["messages"]
        row["tokens_out_per_message"] = (
            _mean([m.get("tokens_out") for m in messages.get(cid, [])]) if n else None
        )
        # spend: dollars (None when a finished call's price is unknown), seconds of calls
        priced = all(c.get("cost") is not None or c.get("state") == "in_flight" for c in conv_calls)
        row["cost"] = round(sum(c.get("cost") or 0 for c in conv_calls), 10) if priced else None
        row["call_seconds"] = round(float(sum(c.get("latency_s") or 0 for c in conv_calls)), 3)
        row.update(old_score_part(scores.get(cid, []), shared))
        rows.append(row)
    return rows


def old_message_part(messages, roles):
    measured = [(m, message_measures(m)) for m in messages]
    n = len(measured)

    def share(name):
        return sum(x[name] for _, x in measured) / n if n else None

    part = {
        "messages": n,
        "words": _mean([x["words"] for _, x in measured]),
        "chars": _mean([x["chars"] for _, x in measured]),
    }
    for role in roles:
        own = [x for m, x in measured if m.get("role") == role]
        part[f"words_{role}"] = _mean([x["words"] for x in own])
        part[f"chars_{role}"] = _mean([x["chars"] for x in own])
    part["trimmed_share"] = share("trimmed")
    part["empty_share"] = share("empty")
    part["refusal_share"] = share("refusal")
    repeats = [
        old_near_duplicate(messages[i - 1].get("text"), messages[i].get("text"))
        for i in range(1, n)
    ]
    part["repetition_share"] = sum(repeats) / len(repeats) if repeats else None
    part["fallback_share"] = share("fallback")
    part["latency_s"] = _mean([x["latency_s"] for _, x in measured])
    return part


def old_score_part(scores, shared):
    own, per_message = defaultdict(list), defaultdict(list)
    for row in scores:
        number = row.get("value_num", to_number(row.get("value")))
        if number is not None:
            kept = own if row.get("target_kind") == "conversation" else per_message
            name = f"score_{row['scorer']}_{row['field']}"
            kept[name].append(number)
            if row.get("scorer") in shared:
                kept[f"{name}_by_{row.get('scored_by') or 'unknown'}"].append(number)
    merged = {**per_message, **own}
    return {name: sum(v) / len(v) for name, v in sorted(merged.items())}


def old_cell_measures(rows, labels):
    names = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in ID_COLUMNS]
    names = [
        n
        for n in names
        if any(isinstance(r.get(n), int | float) for r in rows)
        and all(r.get(n) is None or isinstance(r.get(n), int | float) for r in rows)
    ]
    result = []
    for cell_key, cell in _group(rows, "cell_key").items():
        stored = cell[0].get("cell_label")
        out = {"cell_key": cell_key, "cell_label": stored}
        out["label"] = labels.get(cell_key) or stored or cell_key
        out["n"] = len(cell)
        for name in names:
            mean, low, high = mean_ci([r.get(name) for r in cell])
            out[f"{name}_mean"], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = mean, low, high
        result.append(out)
    return result


# --- a small sweep with everything the measures look at -----------------------------------

TEXTS = (
    "Get back to your cell now.",
    "Get back to your cell now!",  # a near duplicate of the one before
    "I'm sorry, but I cannot do that.",  # a refusal
    "",  # empty
    "The yard opens at noon; line up by the door and wait for the bell.",
    "the yard opens at noon, line up by the door and wait for the bell",
)


def measured_sweep(store, prison_path) -> str:
    """2 cells x 3 repetitions; messages, failed calls, scores by one and by two users."""
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=6,
        days=1,
        agents={"Guard": 1, "Prisoner": 1},
        llms=["mock:a"],
        repetitions=3,
        variants={"Prisoner/Goal": "all"},
        seed=5,
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    rng = random.Random(11)
    for n, conv in enumerate(store.sweeps.conversations(sweep["_id"])):
        cid = conv["_id"]
        for seq in range(n % 5 + 2):
            text = rng.choice(TEXTS)
            extra = {"latency_s": rng.choice([0.5, 1.25, None]), "tokens_out": rng.randint(1, 90)}
            store.messages.insert(message_doc(cid, seq, text, trimmed=seq == 1, **extra))
            error = "boom" if rng.random() < 0.3 else None
            store.calls.insert_at(
                cid,
                seq,
                {"conversation_id": cid, "error": error, "tokens_in": 100 + seq, "tokens_out": 10},
            )
        status = "failed" if n % 4 == 3 else "done"
        store.db.conversations.update_one({"_id": cid}, {"$set": {"status": status}})
        first = store.messages.for_conversation(cid)[0]["_id"]
        store.scores.add(
            "tox", "message", first, {"p": rng.random()}, conversation_id=cid, scored_by="alice"
        )
        if n % 2:
            store.scores.add(
                "tox", "message", first, {"p": 0.5}, conversation_id=cid, scored_by="bob"
            )
        store.scores.add(
            "judge",
            "conversation",
            cid,
            {"hostile": rng.choice(["yes", "no"])},
            conversation_id=cid,
        )
    return sweep["_id"]


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(tables_mod, "BATCH", 4)  # 6 conversations: 2 batches


def test_streamed_measures_equal_the_in_memory_ones(store, prison_path, small_batches):
    sweep_id = measured_sweep(store, prison_path)
    scope = resolve_scope(store, sweep_id)
    tables = old_load_tables(store, scope)
    expected_rows = old_conversation_measures(tables)
    labels = cell_labels(tables["conversations"])
    expected_cells = old_cell_measures(expected_rows, labels)

    measured = measure_scope(store, scope)
    assert list(measured.rows()) == expected_rows  # same keys, same order, same floats
    assert [list(r) for r in measured.rows()] == [list(r) for r in expected_rows]
    assert measured.cells() == expected_cells
    assert any(r["repetition_share"] for r in expected_rows)
    assert any("_by_bob" in k for r in expected_rows for k in r) and len(expected_cells) == 2
    assert "score_tox_p_by_alice" in expected_rows[0]  # shared scorer: a column per user


def test_cli_measures_json_prints_what_it_printed_before(
    tmp_path, prison_path, run_cli, small_batches
):
    from simulator.store.store import open_store_uri

    db = str(tmp_path / "store")
    store = open_store_uri(db)
    sweep_id = measured_sweep(store, prison_path)
    scope = resolve_scope(store, sweep_id)
    tables = old_load_tables(store, scope)
    rows = old_conversation_measures(tables)
    cells = old_cell_measures(rows, cell_labels(tables["conversations"]))
    paper = paper_tables(store, scope)  # a plain sweep: none of the prison paper's tables
    assert paper.tables == [] and paper.labels is None
    store.close()
    from simulator.analysis.measures import MEASURES

    info = {
        "kind": "sweep",
        "id": sweep_id,
        "experiment_id": scope.experiment_id,
        "conversations": 6,
    }
    expected = {
        "scope": info,
        "measures": MEASURES,
        "cells": cells,
        "conversations": rows,
        "paper": [],
        "paper_labels": None,
        "paper_note": paper.note,
    }
    result = run_cli(["measures", sweep_id, "--json"], env={"SIM_DB": db, "SIM_USER": "alice"})
    assert result.code == 0, result.err
    assert result.out == json.dumps(expected, indent=2, ensure_ascii=False, default=str) + "\n"


def test_measures_json_of_an_empty_scope(tmp_path, prison_path, run_cli):
    from simulator.store.store import open_store_uri

    db = str(tmp_path / "store")
    store = open_store_uri(db)
    view = exp_service.import_yaml(store, prison_path, "alice")
    store.close()
    result = run_cli(["measures", view.id, "--json"], env={"SIM_DB": db, "SIM_USER": "alice"})
    assert result.code == 0, result.err
    assert json.loads(result.out)["conversations"] == [] and '"conversations": []' in result.out


def lcs_dp(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for ca in a:
        new = [0]
        for j, cb in enumerate(b):
            new.append(row[j] + 1 if ca == cb else max(row[j + 1], new[j]))
        row = new
    return row[-1]


@settings(max_examples=200, deadline=None)
@given(st.text("ab c", max_size=40), st.text("ab c", max_size=40))
def test_lcs_bound_is_the_longest_common_subsequence(a, b):
    assert lcs_bound(a, b) == lcs_dp(a, b)
    needed = 0.9 * (len(a) + len(b)) / 2
    bound = lcs_bound(a, b, needed)
    assert bound >= lcs_dp(a, b) or bound < needed  # early answers are upper bounds


@settings(max_examples=300, deadline=None)
@given(
    st.text("abc de\u2019XY", max_size=80),
    st.lists(st.tuples(st.integers(0, 80), st.sampled_from("abz ")), max_size=6),
)
def test_near_duplicate_answers_as_difflib_alone(text, edits):
    other = list(text)
    for at, char in edits:  # a few edits: many pairs pass difflib's threshold, some do not
        other.insert(min(at, len(other)), char)
    other = "".join(other)
    assert near_duplicate(text, other) is old_near_duplicate(text, other)
    assert near_duplicate(other, text) is old_near_duplicate(other, text)


def test_near_duplicate_on_long_unlike_texts_matches_difflib():
    rng = random.Random(3)
    words = ("order", "cell", "yard", "rule", "quiet", "keys", "warden", "door", "bell")
    texts = [" ".join(rng.choice(words) for _ in range(60)) for _ in range(40)]
    texts += [texts[0] + " now", texts[0].replace("cell", "cells", 1)]
    pairs = [*itertools.pairwise(texts), (texts[0], texts[-1])]
    assert [near_duplicate(a, b) for a, b in pairs] == [old_near_duplicate(a, b) for a, b in pairs]
    assert near_duplicate(texts[0], texts[-1])
