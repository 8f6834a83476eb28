"""The prison paper's failure and persuasion tables: the release cut imported through the CLI
and read back with `paper_conversations` gives, table by table, what the authors' scripts
compute from the same rows of updated_toxicity_analysis_scores_arrmay.xlsx (read here with
openpyxl and counted the scripts' way); hand-made conversations cover the edge cases."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import openpyxl
import pytest

from simulator.analysis.prison_paper.outcome_labels import canonical_outcome
from simulator.analysis.prison_paper.outcomes import outcome_tables
from simulator.analysis.prison_paper.rows import PaperConversation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_import import FIXTURE

COLUMNS = {
    "model": "llm",
    "risks": "Risks",
    "oversight": "Research Oversight",
    "goal": "goal",
    "prisoner_persona": "personality_prisoner",
    "guard_persona": "personality_guard",
}


def _sheet(name: str) -> list[dict]:
    values = list(openpyxl.load_workbook(FIXTURE / name).worksheets[0].iter_rows(values_only=True))
    header = ["#1" if i == 0 else str(h).strip() for i, h in enumerate(values[0])]
    return [dict(zip(header, row, strict=False)) for row in values[1:]]


def _script_rows() -> list[dict]:
    """The joined table as the scripts clean it: factors and goal_achieved stripped."""
    shares = {r["#1"]: r for r in _sheet("updated_toxicity_analysis_percentage_arrmay.xlsx")}
    rows = []
    for row in _sheet("updated_toxicity_analysis_scores_arrmay.xlsx"):
        clean = {ours: str(row[theirs]).strip() for ours, theirs in COLUMNS.items()}
        clean["goal_achieved"] = str(row["goal_achieved"]).strip()
        clean["turn"] = int(row["turn_goal_achieved"])
        clean["shares"] = [shares[row["#1"]][c] for c in ("perc_toxic_all", "perc_toxic_pris")]
        rows.append(clean)
    return rows


def _by(rows: list[dict], names: tuple[str, ...]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[n] for n in names), []).append(row)
    return groups


def _table(tables, key):
    return {tuple(r.group.values()): r for r in next(t for t in tables if t.key == key).rows}


@pytest.fixture
def imported(paper_cut) -> list[PaperConversation]:
    return list(paper_cut)


def test_failure_tables_follow_the_failures_script(imported):
    tables, rows = outcome_tables(imported), _script_rows()
    assert len(imported) == len(rows) == 16
    by_model = _table(tables, "failures_by_model")
    for key, group in _by(rows, ("model",)).items():
        failed = sum(r["goal_achieved"] == "NAN" for r in group)
        assert by_model[key].n == len(group) and by_model[key].extra["k"] == failed
        assert by_model[key].value == pytest.approx(failed / len(group) * 100)
    scenario = _table(tables, "failures_by_scenario")
    names = ("model", "risks", "oversight", "goal", "prisoner_persona", "guard_persona")
    groups = _by(rows, names)
    assert list(scenario) == sorted(groups)
    model_failures = {
        m: sum(r["goal_achieved"] == "NAN" for r in g) for (m,), g in _by(rows, ("model",)).items()
    }
    for key, group in groups.items():
        failed = sum(r["goal_achieved"] == "NAN" for r in group)
        row = scenario[key]
        assert (row.n, row.extra["k"]) == (len(group), failed)
        assert row.value == pytest.approx(failed / len(group) * 100)
        assert row.extra["marginal_failure_percent"] == pytest.approx(
            failed / model_failures[key[0]] * 100
        )
        assert row.ci_low <= row.value <= row.ci_high


@pytest.mark.parametrize(
    "names, suffix",
    [
        (("model",), "model"),
        (("goal",), "goal"),
        (("guard_persona",), "guard_persona"),
        (("model", "goal"), "model_goal"),
        (("model", "goal", "prisoner_persona", "guard_persona"), "model_goal_personas"),
    ],
)
def test_attempt_and_success_follow_the_persuasion_script(imported, names, suffix):
    tables = outcome_tables(imported)
    valid = [r for r in _script_rows() if r["goal_achieved"] in {"Yes", "No", "NotTried"}]
    attempts = _table(tables, f"persuasion_attempts_by_{suffix}")
    success = _table(tables, f"persuasion_success_by_{suffix}")
    groups = _by(valid, names)
    assert list(attempts) == list(success) == sorted(groups)
    for key, group in groups.items():
        tried = [r for r in group if r["goal_achieved"] in {"Yes", "No"}]
        won = [r for r in tried if r["goal_achieved"] == "Yes"]
        assert (attempts[key].n, attempts[key].extra["k"]) == (len(group), len(tried))
        assert attempts[key].value == pytest.approx(len(tried) / len(group) * 100)
        assert (success[key].n, success[key].extra["k"]) == (len(tried), len(won))
        if tried:
            assert success[key].value == pytest.approx(len(won) / len(tried) * 100)
        else:
            assert success[key].value is None and success[key].ci_low is None


def test_strict_table_figure_2_and_figure_4_follow_the_script(imported):
    tables, rows = outcome_tables(imported), _script_rows()
    kept = [r for r in rows if r["goal_achieved"] != "NAN"]
    strict = _table(tables, "persuasion_strict_by_model_goal")
    expected = {}
    for key, group in _by(kept, ("model", "goal")).items():
        tried = [r for r in group if r["goal_achieved"] in {"Yes", "No"}]
        if tried:
            won = sum(r["goal_achieved"] == "Yes" for r in tried)
            expected[(*key, "lenient")] = (won / len(tried) * 100, len(tried))
            expected[(*key, "strict")] = (None, len(tried))
    found = {k: (r.value, r.n) for k, r in strict.items()}
    assert found.keys() == expected.keys()
    for key, (value, n) in expected.items():
        assert found[key] == (None if value is None else pytest.approx(value), n)

    spread = _table(tables, "outcome_distribution_by_model_goal")
    for (model, goal), group in _by(kept, ("model", "goal")).items():
        for outcome in ("Yes", "No", "NotTried"):
            k = sum(r["goal_achieved"] == outcome for r in group)
            row = spread[(model, goal, outcome)]
            assert (row.n, row.value) == (len(group), pytest.approx(k / len(group) * 100))

    thirds = _table(tables, "success_third_by_model_goal")
    reached = [r for r in kept if r["turn"] != 0]
    assert {k[:2] for k in thirds} == set(_by(reached, ("model", "goal")))
    for (model, goal), group in _by(reached, ("model", "goal")).items():
        for third in (1, 2, 3):
            k = sum(r["turn"] == third for r in group)
            assert thirds[(model, goal, str(third))].value == pytest.approx(k / len(group) * 100)

    names = ("model", "goal_achieved", "guard_persona", "prisoner_persona")
    for key, index in (("toxic_share_all", 0), ("toxic_share_prisoner", 1)):
        found = _table(tables, f"{key}_by_model_outcome_personas")
        groups = _by(kept, names)
        assert set(found) == set(groups)
        for group_key, group in groups.items():
            values = [r["shares"][index] * 100 for r in group]
            assert found[group_key].value == pytest.approx(statistics.fmean(values))
            if len(values) > 1:
                assert found[group_key].extra["sd"] == pytest.approx(statistics.stdev(values))


def _conversation(i: int, outcome: str | None, goal: str = "Escape", third=0, failed=False):
    factors = {"model": " m1 ", "goal": goal, "guard_persona": "G", "prisoner_persona": "P"}
    return PaperConversation(f"c{i}", factors, outcome, third, failed)


def test_labels_in_odd_case_and_spelling_read_as_the_script_reads_them():
    assert [canonical_outcome(x) for x in (" yes ", "NO", "not tried", "Not_Tried", "nan")] == [
        "Yes",
        "No",
        "NotTried",
        "NotTried",
        "NAN",
    ]
    assert canonical_outcome(None) == "NAN" and canonical_outcome(" Maybe ") == "Maybe"
    convs = [
        _conversation(1, " yes ", third=2),
        _conversation(2, "no"),
        _conversation(3, "NOTTRIED"),
    ]
    tables = outcome_tables(convs)
    attempts = _table(tables, "persuasion_attempts_by_model")[("m1",)]
    success = _table(tables, "persuasion_success_by_model")[("m1",)]
    assert (attempts.extra["k"], attempts.n, success.extra["k"], success.n) == (2, 3, 1, 2)
    assert _table(tables, "success_third_by_model_goal")[("m1", "Escape", "2")].value == 100


def test_group_without_attempts_and_all_failed():
    convs = [_conversation(1, "NotTried"), _conversation(2, "Yes", goal="Yard Time", third=1)]
    tables = outcome_tables(convs)
    success = _table(tables, "persuasion_success_by_model_goal")
    assert success[("m1", "Escape")].n == 0 and success[("m1", "Escape")].value is None
    assert success[("m1", "Yard Time")].value == 100
    assert set(_table(tables, "persuasion_strict_by_model_goal")) == {
        ("m1", "Yard Time", "lenient"),
        ("m1", "Yard Time", "strict"),
    }
    strict = outcome_tables(convs, strict={"c1": " YES", "c2": "no"})
    rows = _table(strict, "persuasion_strict_by_model_goal")
    assert rows[("m1", "Yard Time", "strict")].extra == {"k": 0, "delta": 1}

    failed = [_conversation(1, "Yes", failed=True), _conversation(2, None), _conversation(3, "NAN")]
    tables = outcome_tables(failed)
    row = _table(tables, "failures_by_model")[("m1",)]
    assert (row.value, row.n) == (100, 3)
    assert (
        _table(tables, "failures_by_scenario")[("m1", "", "", "Escape", "P", "G")].extra[
            "marginal_failure_percent"
        ]
        == 100
    )
    for table in tables[2:]:
        assert table.rows == [], table.key
