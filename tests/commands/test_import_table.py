"""`llm-sim import table` with the shipped prison-paper mapping, on a cut of the authors'
release (tests/fixtures/prison_paper): what it stores in each store, that a second import adds
nothing, and that bad input stores nothing and names where the problem is."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import openpyxl
import pytest

from simulator.store.database import open_database
from simulator.store.store import open_store

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "prison_paper"
MAPPING = REPO / "prompts" / "mappings" / "prison_paper.yaml"
WORKBOOKS = ["llama3.xlsx", "command-r.xlsx", "orca2.xlsx", "gpt.xlsx"]
JOINED = "updated_toxicity_analysis_scores_arrmay.xlsx"
OPENAI = "updated_openai_toxicity_analysis_scores_arrmay.xlsx"


def _rows(path: Path, sheet: str | None = None) -> list[dict]:
    """A sheet's rows as header -> value, read directly with openpyxl (the test's own view)."""
    book = openpyxl.load_workbook(path, data_only=True)
    ws = book[sheet] if sheet else book.worksheets[0]
    values = list(ws.iter_rows(values_only=True))
    header = ["#1" if i == 0 else h for i, h in enumerate(values[0])]
    return [dict(zip(header, row, strict=False)) for row in values[1:]]


def _fixture_rows() -> list[tuple[str, str, dict]]:
    found = []
    for name in WORKBOOKS:
        for sheet in openpyxl.load_workbook(FIXTURE / name).sheetnames:
            found += [(name, sheet, row) for row in _rows(FIXTURE / name, sheet)]
    return found


def _outcomes() -> dict[str, dict]:
    return {row["#1"]: row for row in _rows(FIXTURE / JOINED)}


@pytest.fixture
def target(store_uri):
    db_name = f"t_{uuid.uuid4().hex[:10]}"
    env = {"SIM_DB": store_uri, "SIM_DB_NAME": db_name, "SIM_USER": "alice"}

    def open_target():
        return open_store(open_database(store_uri, db_name))

    return env, open_target


def _import(run_cli, env, *extra, folder=FIXTURE, mapping=MAPPING):
    return run_cli(["import", "table", str(mapping), "--from", str(folder), *extra], env=env)


def test_imports_every_row_with_cell_messages_labels_and_failed_marks(run_cli, target):
    env, open_target = target
    result = _import(run_cli, env, "--json")
    assert result.code == 0, result.err
    rows, outcomes = _fixture_rows(), _outcomes()
    failed = {i for i, row in outcomes.items() if row["goal_achieved"] == "NAN"}
    summary = result.json()
    assert summary["added"] == len(rows) == 16
    assert summary["already_present"] == 0
    assert summary["failed"] == len(failed) > 0
    per_model = {m: c["conversations"] for m, c in summary["counts"].items()}
    assert per_model == {m: 4 for m in {o["llm"] for o in outcomes.values()}}

    store = open_target()
    try:
        experiment = store.experiments.get(summary["experiment_id"])
        assert experiment["imported"] is True
        assert experiment["source"]["mapping"] == "prison_paper"
        assert set(experiment["source"]["files"]) == {
            *WORKBOOKS,
            JOINED,
            JOINED.replace("scores", "percentage"),
            OPENAI,
            OPENAI.replace("scores", "percentage"),
        }
        ids = store.conversations.ids(summary["experiment_id"])
        docs = store.conversations.get_many(ids)
        assert len(docs) == 16
        by_source = {d["source"]["id"]: d for d in docs}
        assert set(by_source) == {row["#1"] for _, _, row in rows}
        for source_id, doc in by_source.items():
            outcome = outcomes[source_id]
            assert doc["status"] == ("failed" if source_id in failed else "done")
            assert doc["cell"] == {
                "model": outcome["llm"], "goal": outcome["goal"],
                "guard_persona": outcome["personality_guard"],
                "prisoner_persona": outcome["personality_prisoner"],
                "risks": outcome["Risks"], "oversight": outcome["Research Oversight"],
            }  # fmt: skip
            assert doc["cell_label"].startswith(f"model={outcome['llm']} goal={outcome['goal']}")

        # one conversation of each transcript style: its first and last turns, as written
        for name, style_first in (("llama3.xlsx", "Turn 1 Guard : "), ("gpt.xlsx", "1 Guard : ")):
            _, _, row = next(r for r in rows if r[0] == name)
            transcript = row.get("conversation") or row.get("Text")
            assert transcript.startswith(style_first)
            doc = by_source[row["#1"]]
            messages = store.messages.for_conversation(doc["_id"])
            last_turn = transcript.strip().split("\n\n")[-1]
            assert len(messages) == transcript.count(" Guard : ") + transcript.count(" Prisoner : ")
            assert messages[0]["speaker"] == "Guard" and messages[0]["role"] == "Guard"
            assert messages[0]["turn"] == 1
            assert transcript[len(style_first) :].lstrip('"').startswith(messages[0]["text"][:40])
            assert messages[0]["text"] and not messages[0]["text"].startswith('"')
            assert messages[-1]["text"] in last_turn
            assert last_turn.split(" : ", 1)[1].strip().strip('"') == messages[-1]["text"]
            assert [m["seq"] for m in messages] == list(range(len(messages)))

        # labels and scores: scorer label:<source> / score:<source>, target the conversation
        name, sheet, row = rows[0]
        doc = by_source[row["#1"]]
        scores = {s["scorer"]: s for s in store.scores.for_conversations([doc["_id"]])}
        assert scores["label:annotator_1"]["values"] == {"label": row["GOAL1"]}
        assert scores["label:annotator_2"]["values"] == {"label": row["GOAL2"]}
        assert scores["label:annotator_1_turn"]["values"] == {
            "turn": int(float(row["TURN1"])), "third": int(row["TURN1_DISCR"]),
        }  # fmt: skip
        outcome = outcomes[row["#1"]]
        assert scores["label:adjudicated"]["values"] == {"label": outcome["goal_achieved"]}
        assert scores["label:adjudicated_turn"]["values"] == {
            "third": int(outcome["turn_goal_achieved"])
        }
        assert scores["score:toxic_all"]["values"] == {"value": outcome["score_toxic_all"]}
        moderation = {r["#1"]: r for r in _rows(FIXTURE / OPENAI)}[row["#1"]]
        shares = {r["#1"]: r for r in _rows(FIXTURE / OPENAI.replace("scores", "percentage"))}
        assert scores["score:harassment_guard"]["values"] == {
            "value": moderation["score_toxic_guard_harassment"]
        }
        assert scores["score:violence_share_prisoner"]["values"] == {
            "value": shares[row["#1"]]["perc_toxic_pris_violence"]
        }
        assert scores["label:annotator_1"]["target_kind"] == "conversation"
        assert scores["label:annotator_1"]["details"]["sheet"] == sheet
        for source_id in failed:
            stored = store.scores.for_conversations(
                [by_source[source_id]["_id"]], "label:adjudicated"
            )
            assert stored[0]["values"] == {"label": "NAN"}
    finally:
        store.close()


def test_a_second_import_adds_nothing(run_cli, target):
    env, open_target = target
    assert _import(run_cli, env).code == 0
    again = _import(run_cli, env, "--json")
    assert again.code == 0, again.err
    assert again.json()["added"] == 0
    assert again.json()["already_present"] == 16
    plain = _import(run_cli, env)
    assert "0 added, 16 already present" in " ".join(plain.out.split())
    store = open_target()
    try:
        assert store.experiments.count() == 1
        assert store.conversations.count() == 16
    finally:
        store.close()


def test_dry_run_stores_nothing(run_cli, target):
    env, open_target = target
    result = _import(run_cli, env, "--dry-run", "--json", mapping="prison_paper")
    assert result.code == 0, result.err
    assert result.json()["dry_run"] is True
    assert result.json()["added"] == 16
    store = open_target()
    try:
        assert store.experiments.count() == 0
        assert store.conversations.count() == 0
    finally:
        store.close()


def _nothing_stored(open_target) -> None:
    store = open_target()
    try:
        assert store.experiments.count() == 0
        assert store.conversations.count() == 0
        assert store.scores.for_conversations([]) == []
        assert store.db.scores.count_documents({}) == 0
        assert store.db.messages.count_documents({}) == 0
    finally:
        store.close()


def test_a_mapping_naming_a_missing_column_stores_nothing(run_cli, target, tmp_path):
    env, open_target = target
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(MAPPING.read_text().replace("{column: GOAL2}", "{column: GOAL3}", 1))
    result = _import(run_cli, env, mapping=mapping)
    assert result.code == 2
    message = " ".join(result.err.split())
    assert "llama3.xlsx" in message and "no column 'GOAL3'" in message
    assert "YardTime_No_res_ov_No_risks_csv" in message
    _nothing_stored(open_target)


def test_a_malformed_turn_names_file_sheet_row_and_column_and_stores_nothing(
    run_cli, target, tmp_path
):
    env, open_target = target
    folder = tmp_path / "release"
    shutil.copytree(FIXTURE, folder)
    book = openpyxl.load_workbook(folder / "orca2.xlsx")
    sheet = book.worksheets[1]
    cell = sheet.cell(row=3, column=2)  # the second conversation's transcript
    cell.value = cell.value.replace("\n\nTurn 2 Guard : ", "\n\nTurn 2 Guard: ", 1)
    book.save(folder / "orca2.xlsx")
    result = _import(run_cli, env, folder=folder)
    assert result.code == 2
    message = " ".join(result.err.split())
    assert f"orca2.xlsx, sheet '{sheet.title}', row 3, column B (conversation)" in message
    assert "is not written as transcript.turn expects: 'Turn 2 Guard:" in message
    _nothing_stored(open_target)


def test_a_formula_without_a_computed_value_is_refused(run_cli, target, tmp_path):
    env, open_target = target
    folder = tmp_path / "release"
    shutil.copytree(FIXTURE, folder)
    book = openpyxl.load_workbook(folder / "gpt.xlsx")
    book.worksheets[0]["G2"] = "=IFERROR(QUOTIENT(E2+2, 3), 0)"  # saved uncomputed by openpyxl
    book.save(folder / "gpt.xlsx")
    result = _import(run_cli, env, folder=folder)
    assert result.code == 2
    message = " ".join(result.err.split())
    assert "gpt.xlsx, sheet 'annotation_0', row 2, column G (TURN1_DISCR)" in message
    assert "no computed value" in message
    _nothing_stored(open_target)


def test_a_conversation_missing_from_the_joined_table_is_refused(run_cli, target, tmp_path):
    env, open_target = target
    folder = tmp_path / "release"
    shutil.copytree(FIXTURE, folder)
    book = openpyxl.load_workbook(folder / JOINED)
    gone = book.worksheets[0]["A2"].value
    book.worksheets[0].delete_rows(2)
    book.save(folder / JOINED)
    result = _import(run_cli, env, folder=folder)
    assert result.code == 2
    message = " ".join(result.err.split())
    assert f"id {gone} has no row in {JOINED}" in message
    _nothing_stored(open_target)


SHEET_MAPPING = """
name: sheets_only
experiment: Factors from sheet names
tables:
  - files: [llama3.xlsx]
    id: "#1"
    sheet_factors: '^(?P<goal>[A-Za-z]+)_(?P<oversight>Yes|No)_res_ov_(?P<risks>Yes|No)_risks'
    transcript:
      column: conversation
      turn: '(?ms)^Turn (?P<turn>\\d+) (?P<speaker>\\w+) : "?(?P<text>.*?)"?\\s*(?=^Turn |\\Z)'
      roles: {Guard: Guard, Prisoner: Prisoner}
    labels:
      annotator_1: {column: GOAL1}
"""


def test_factors_from_sheet_names_without_a_joined_table(run_cli, target, tmp_path):
    env, open_target = target
    mapping = tmp_path / "sheets.yaml"
    mapping.write_text(SHEET_MAPPING)
    result = _import(run_cli, env, "--json", mapping=mapping)
    assert result.code == 0, result.err
    assert result.json()["failed"] == 0  # no `failed` rule: every conversation is done
    store = open_target()
    try:
        docs = store.conversations.get_many(store.conversations.ids(result.json()["experiment_id"]))
        sheets = openpyxl.load_workbook(FIXTURE / "llama3.xlsx").sheetnames
        assert len(docs) == 2 * len(sheets)
        for doc in docs:
            parts = doc["source"]["sheet"].split("_")  # e.g. YardTime_No_res_ov_Yes_risks_cs
            goal, oversight, risks = parts[0], parts[1], parts[4]
            assert doc["cell"] == {"goal": goal, "oversight": oversight, "risks": risks}
            assert doc["status"] == "done"
    finally:
        store.close()


def test_agreement_on_the_imported_cut_equals_the_papers_computation(run_cli, target):
    """Import, then `llm-sim agreement --by model`: each model's kappa of the two annotators'
    goal labels and turn thirds equals what the paper's cohens_k_annotation.py computes on
    the same rows (sklearn on the lower-cased, stripped columns, read here with openpyxl)."""
    from sklearn.metrics import cohen_kappa_score

    env, _ = target
    imported = _import(run_cli, env, "--json")
    assert imported.code == 0, imported.err
    experiment = imported.json()["experiment_id"]
    outcomes = _outcomes()
    columns = {"goal": ("GOAL1", "GOAL2"), "third": ("TURN1_DISCR", "TURN2_DISCR")}
    sources = {
        "goal": ("label:annotator_1", "label:annotator_2"),
        "third": ("label:annotator_1_turn", "label:annotator_2_turn"),
    }
    for measure, (first, second) in columns.items():
        pairs: dict[str, list[tuple[str, str]]] = {}
        for name, _, row in _fixture_rows():
            if name == "gpt.xlsx":  # its columns are named otherwise; its turns give thirds
                continue
            model = outcomes[row["#1"]]["llm"]
            a, b = (str(row[c]).lower().strip() for c in (first, second))
            pairs.setdefault(model, []).append((a, b))
        found = run_cli(
            ["agreement", experiment, "--between", *sources[measure], "--by", "model", "--json"],
            env=env,
        )
        assert found.code == 0, found.err
        groups = {g["group"]: g for g in found.json()["measures"][measure]}
        for model, labelled in pairs.items():
            expected = cohen_kappa_score([a for a, _ in labelled], [b for _, b in labelled])
            assert groups[model]["n"] == len(labelled)
            if expected == expected:  # NaN where the kappa is undefined
                assert groups[model]["kappa"] == pytest.approx(expected, abs=1e-12), model
