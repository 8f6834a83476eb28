"""The terminal screens at 80 columns, through the real CLI (in-process): `conversation list`
prints every id in full, `measures` names each cell by what differs between the cells, and
`conversation show` marks invisible characters instead of sending them to the terminal."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from stored_messages import message_doc

from simulator.analysis.cell_labels import cell_labels
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
HIDDEN = (
    "Fine.\u202e.won em tel\u202c \u200bhidden\u2066x\u2069 \x1b[31mred\x1b[0m "
    "\x07\ufeff\x85\U000e0041"
)


@pytest.fixture
def sweep_store() -> dict:
    """A finished sweep stored directly: 3 Personalities x 2 Goals, 2 conversations each."""
    uri = f"mongomock://{uuid.uuid4().hex}"
    store = open_store_uri(uri)
    view = exp_service.import_yaml(store, REPO / "prompts/experiments/prison.yaml", "alice")
    spec = SweepSpec(
        total_messages=4,
        days=1,
        agents={"Guard": 1, "Prisoner": 1},
        llms=["mock:a"],
        repetitions=2,
        variants={"Prisoner/Goal": "all", "Guard/Personality": "all"},
        seed=5,
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    conversations = store.sweeps.conversations(sweep["_id"])
    for n, conv in enumerate(conversations):
        for seq in range(4):
            text = HIDDEN if (n, seq) == (0, 1) else "word " * (n + seq + 3)
            store.messages.insert(
                message_doc(conv["_id"], seq, text, latency_s=0.5 + n / 10, tokens_out=7)
            )
        store.db.conversations.update_one({"_id": conv["_id"]}, {"$set": {"status": "done"}})
    return {"uri": uri, "sweep": sweep, "conversations": conversations}


def _env(data: dict, columns: int = 80) -> dict:
    return {"SIM_DB": data["uri"], "SIM_USER": "alice", "COLUMNS": str(columns)}


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_conversation_list_at_80_columns_prints_every_id_in_full(sweep_store, run_cli):
    result = run_cli(["conversation", "list"], env=_env(sweep_store))
    assert result.code == 0, result.err
    assert len(sweep_store["conversations"]) == 12
    rows = [line for line in result.out.splitlines() if "conv_" in line]
    assert len(rows) == 12  # one line per conversation
    for conv in sweep_store["conversations"]:
        [row] = [line for line in rows if conv["_id"] in line]  # the id whole
        assert conv["experiment_id"] in row
    assert max(len(line) for line in result.out.splitlines()) <= 80


def test_conversation_list_on_a_wide_screen_shows_every_column(sweep_store, run_cli):
    result = run_cli(["conversation", "list"], env=_env(sweep_store, 200))
    assert result.code == 0, result.err
    rows = [line for line in result.out.splitlines() if "conv_" in line]
    assert len(rows) == 12 and all("exp_" in row and "round_robin" in row for row in rows)
    assert "…" not in result.out  # nothing had to be cut


def test_measures_at_80_columns_label_cells_by_what_differs(sweep_store, run_cli):
    result = run_cli(["measures", sweep_store["sweep"]["_id"]], env=_env(sweep_store))
    assert result.code == 0, result.err
    expected = {
        f"Personality={p} Goal={g}"
        for p in ("respectful", "abusive", "blank")
        for g in ("yard_time", "escape")
    }
    flat = _flat(result.out)
    for label in expected:
        assert f"{label} n=2" in flat  # whole, once per cell
    assert "…" not in result.out
    assert max(len(line) for line in result.out.splitlines()) <= 80


def test_measures_json_carries_the_distinguishing_label(sweep_store, run_cli):
    result = run_cli(["measures", sweep_store["sweep"]["_id"], "--json"], env=_env(sweep_store))
    assert result.code == 0, result.err
    labels = [cell["label"] for cell in result.json()["cells"]]
    assert len(set(labels)) == len(labels) == 6
    assert all(cell["cell_label"] for cell in result.json()["cells"])  # the stored one stays


def test_conversation_show_marks_invisible_characters(sweep_store, run_cli):
    conversation = sweep_store["conversations"][0]["_id"]
    result = run_cli(["conversation", "show", conversation], env=_env(sweep_store))
    assert result.code == 0, result.err
    for code in ("202E", "202C", "200B", "2066", "2069", "001B", "0007", "FEFF", "0085", "E0041"):
        assert f"⟨U+{code}⟩" in result.out
    assert not re.search("[\u202e\u202c\u200b\u2066\u2069\x1b\x07\ufeff\x85\U000e0041]", result.out)
    assert "⟨U+202E⟩.won em tel⟨U+202C⟩" in _flat(result.out)


def _row(key: str, **fields) -> dict:
    base = {
        "cell_key": key,
        "cell_label": "same label",
        "days": 1,
        "speaker_method": "round_robin",
        "manager_llm": None,
        "summarizer_llm": None,
        "agents_Guard": 1,
        "agents_Prisoner": 1,
        "llm_Guard": "mock:a",
        "llm_Prisoner": "mock:a",
    }
    return {**base, **fields}


def test_cell_labels_name_only_the_factors_that_differ():
    rows = [
        _row("k1", agents_Guard=2, **{"variant_Guard/Personality": "abusive"}),
        _row("k2", agents_Guard=1, **{"variant_Guard/Personality": "abusive"}),
        _row("k1", agents_Guard=2, **{"variant_Guard/Personality": "abusive"}),  # same cell
        _row("k3", agents_Guard=2, **{"variant_Guard/Personality": "blank"}),
    ]
    assert cell_labels(rows) == {
        "k1": "Guard=2 Prisoner=1 · Personality=abusive",
        "k2": "Guard=1 Prisoner=1 · Personality=abusive",
        "k3": "Guard=2 Prisoner=1 · Personality=blank",
    }


def test_cell_labels_models_managers_and_clashing_slot_names():
    rows = [
        _row(
            "a", llm_Prisoner="mock:b", **{"variant_Guard/Goal": "x", "variant_Prisoner/Goal": "x"}
        ),
        _row("b", speaker_method="auto", manager_llm="mock:m", **{"variant_Guard/Goal": "y"}),
    ]
    assert cell_labels(rows) == {
        "a": "Guard→mock:a Prisoner→mock:b · manager=none · speaker=round_robin · "
        "Guard/Goal=x Prisoner/Goal=x",
        "b": "mock:a · manager=mock:m · speaker=auto · Guard/Goal=y Prisoner/Goal=(default)",
    }


def test_cell_labels_stay_distinct_when_no_factor_differs():
    labels = cell_labels([_row("k1"), _row("k2")])
    assert labels == {"k1": "same label · cell k1", "k2": "same label · cell k2"}
    assert cell_labels([_row("only")]) == {"only": "same label"}
