"""The prison paper's tables around `measures`, `export` and `report`, on the imported cut of
the authors' release (tests/fixtures/prison_paper), through the real CLI.

The table builders are the paper's own modules in the product; here a stand-in builder (the
share of each outcome per model, computed the way the authors' script counts goal_achieved)
is plugged into the registry, so these tests check the plumbing whatever tables exist, and the
expected values are read from the fixture's joined spreadsheet with openpyxl."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
import uuid
from collections import Counter, defaultdict
from pathlib import Path

import openpyxl
import pytest

from simulator.analysis.label_sources import judge_prison_goal
from simulator.analysis.prison_paper import measures as paper_measures
from simulator.analysis.prison_paper.table import PaperTable, share_row, wilson
from simulator.analysis.scorers.rubric import load_rubric

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "prison_paper"
JOINED = FIXTURE / "updated_toxicity_analysis_scores_arrmay.xlsx"
OUTCOMES = ("Yes", "No", "NotTried", "NAN")
sys.path.insert(0, str(REPO / "tests" / "analysis"))
from cdp_browser import ConsoleBrowser  # noqa: E402 (tests/analysis/cdp_browser.py)


def stand_in(conversations) -> list[PaperTable]:
    """One table per outcome: its share (percent) of each model's conversations."""
    by_model: dict[str, list[str | None]] = defaultdict(list)
    for conv in conversations:
        by_model[conv.factors["model"]].append(conv.outcome)
    return [
        PaperTable(
            f"share_{outcome.lower()}_by_model",
            f"Conversations labelled {outcome}",
            "Table 0",
            "percent",
            ["model"],
            [
                share_row({"model": m}, sum(o == outcome for o in found), len(found), True)
                for m, found in sorted(by_model.items())
            ],
        )
        for outcome in OUTCOMES
    ]


def joined_outcomes() -> dict[str, Counter]:
    """Per model, goal_achieved counted as the authors' script counts it (from the sheet)."""
    book = openpyxl.load_workbook(JOINED, data_only=True)
    rows = list(book.worksheets[0].iter_rows(values_only=True))
    header = list(rows[0])
    counts: dict[str, Counter] = defaultdict(Counter)
    for row in rows[1:]:
        counts[row[header.index("llm")]][str(row[header.index("goal_achieved")])] += 1
    return counts


@pytest.fixture
def imported(run_cli, store_uri, monkeypatch):
    monkeypatch.setattr(paper_measures, "PAPER_TABLE_BUILDERS", [stand_in])
    env = {"SIM_DB": store_uri, "SIM_DB_NAME": f"t_{uuid.uuid4().hex[:10]}", "SIM_USER": "alice"}
    result = run_cli(["import", "table", "prison_paper", "--from", str(FIXTURE), "--json"], env=env)
    assert result.code == 0, result.err
    return env, result.json()["experiment_id"]


def _check_tables(tables: list[dict], counts: dict[str, Counter]) -> None:
    assert [t["key"] for t in tables] == [f"share_{o.lower()}_by_model" for o in OUTCOMES]
    for table, outcome in zip(tables, OUTCOMES, strict=True):
        assert table["paper_ref"] == "Table 0" and table["group_by"] == ["model"]
        assert [r["group"]["model"] for r in table["rows"]] == sorted(counts)
        for row in table["rows"]:
            found = counts[row["group"]["model"]]
            k, n = found[outcome], sum(found.values())
            low, high = wilson(k, n)
            assert row["n"] == n
            assert row["value"] == pytest.approx(100 * k / n)
            assert row["ci_low"] == pytest.approx(100 * low)
            assert row["ci_high"] == pytest.approx(100 * high)


def test_measures_json_has_the_papers_tables_from_the_adjudicated_labels(run_cli, imported):
    env, exp_id = imported
    result = run_cli(["measures", exp_id, "--json"], env=env)
    assert result.code == 0, result.err
    data = result.json()
    assert data["paper_labels"] == "label:adjudicated"
    assert data["cells"] and len(data["conversations"]) == 16
    _check_tables(data["paper"], joined_outcomes())

    only = run_cli(["measures", exp_id, "--table", "share_nan_by_model", "--json"], env=env)
    assert only.code == 0, only.err
    assert [t["key"] for t in only.json()["paper"]] == ["share_nan_by_model"]
    assert "cells" not in only.json()


def test_measures_text_fits_80_columns_and_bad_choices_exit_2(run_cli, imported, tmp_path):
    env, exp_id = imported
    result = run_cli(["measures", exp_id], env={**env, "COLUMNS": "80"})
    assert result.code == 0, result.err
    assert max(len(line) for line in result.out.splitlines()) <= 80
    assert "The paper's tables, outcomes from label:adjudicated" in result.out
    for outcome in OUTCOMES:
        assert f"Table 0: Conversations labelled {outcome}" in result.out
    counts = joined_outcomes()
    nan = run_cli(["measures", exp_id, "--paper"], env={**env, "COLUMNS": "80"}).out
    assert "Measures of" not in nan
    for model, found in counts.items():  # each model's row: its NAN share and n
        n = sum(found.values())
        line = next(x for x in nan.splitlines() if x.startswith(model[:8]) and "[" in x)
        assert line.split()[-1] == str(n)

    bad = run_cli(["measures", exp_id, "--labels", "label:nobody"], env=env)
    assert bad.code == 2
    assert "--labels" in bad.err and "label:adjudicated" in bad.err
    assert "judge:prison_goal" not in bad.err  # not scored yet: not offered
    unknown = run_cli(["measures", exp_id, "--table", "nope"], env=env)
    assert unknown.code == 2 and "share_yes_by_model" in unknown.err
    export_bad = run_cli(
        ["export", exp_id, "-o", str(tmp_path / "x"), "--labels", "x:y"],
        env=env,
    )
    assert export_bad.code == 2 and "--labels" in export_bad.err


def test_export_writes_one_row_per_table_row(run_cli, imported, tmp_path):
    env, exp_id = imported
    out = tmp_path / "out"
    result = run_cli(["export", exp_id, "--format", "csv", "-o", str(out), "--json"], env=env)
    assert result.code == 0, result.err
    files = {f["table"]: f for f in result.json()["files"]}
    assert {"conversations", "messages", "scores", "paper_tables"} <= set(files)
    with (out / "paper_tables.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    counts = joined_outcomes()
    assert len(rows) == files["paper_tables"]["rows"] == len(OUTCOMES) * len(counts)
    assert list(rows[0])[:5] == ["key", "paper_ref", "value_kind", "labels", "model"]
    for row in rows:
        outcome = next(o for o in OUTCOMES if row["key"] == f"share_{o.lower()}_by_model")
        found = counts[row["model"]]
        assert int(row["n"]) == sum(found.values())
        assert float(row["value"]) == pytest.approx(100 * found[outcome] / int(row["n"]))
        assert row["labels"] == "label:adjudicated" and row["ci_low"] and row["ci_high"]


def test_a_mock_judge_completes_the_pipeline(run_cli, imported):
    env, exp_id = imported
    scored = run_cli(
        ["score", exp_id, "--scorer", "judge:prison_goal", "--llm", "mock:judge", "--json"],
        env=env,
    )
    assert scored.code == 0, scored.err
    assert scored.json()["scored"] == 16 and scored.json()["failed"] == 0

    result = run_cli(["measures", exp_id, "--labels", "judge:prison_goal", "--json"], env=env)
    assert result.code == 0, result.err
    data = result.json()
    assert data["paper_labels"] == "judge:prison_goal"
    # the mock answers the rubric's example: every conversation gets the example's label
    example = json.loads(re.search(r"For example: (\{.*\})", load_rubric("prison_goal")
                                   .answer_format()).group(1))  # fmt: skip
    label = judge_prison_goal(example, 10)["goal"]
    counts = {m: Counter({label: sum(c.values())}) for m, c in joined_outcomes().items()}
    _check_tables(data["paper"], counts)

    agreement = run_cli(
        ["agreement", exp_id, "--between", "label:adjudicated", "judge:prison_goal",
         "--by", "model", "--json"],
        env=env,
    )  # fmt: skip
    assert agreement.code == 0, agreement.err
    goal = agreement.json()["measures"]["goal"]
    assert goal[0]["n"] == 16
    assert {g["group"] for g in goal[1:]} == set(counts)


def test_the_report_draws_one_figure_per_table_with_no_console_error(run_cli, imported, tmp_path):
    pytest.importorskip("matplotlib")
    if shutil.which("chromium") is None:
        pytest.skip("headless Chromium is not installed")
    env, exp_id = imported
    page = tmp_path / "report.html"
    result = run_cli(["report", exp_id, "-o", str(page)], env=env)
    assert result.code == 0, result.err
    browser = ConsoleBrowser(tmp_path / "profile")
    try:
        browser.open(page.as_uri())
        browser.wait_for("document.readyState === 'complete'", 20)
        found = browser.js(
            "(() => { const s = document.getElementById('paper'); return s && {"
            "title: s.querySelector('h2').textContent, "
            "keys: Array.from(s.querySelectorAll('figure')).map(f => f.dataset.key), "
            "images: Array.from(s.querySelectorAll('figure img')).map(i => "
            "[i.complete, i.naturalWidth > 0]), "
            "rows: Array.from(s.querySelectorAll('figure table')).map(t => t.rows.length - 1),"
            "link: !!document.querySelector('nav a[href=\"#paper\"]')}; })()"
        )
        assert found is not None
        assert found["title"] == "The paper's tables and figures" and found["link"]
        assert found["keys"] == [f"share_{o.lower()}_by_model" for o in OUTCOMES]
        assert found["images"] == [[True, True]] * len(OUTCOMES)
        assert found["rows"] == [len(joined_outcomes())] * len(OUTCOMES)
        assert browser.errors == []
    finally:
        browser.close()


def test_a_bar_whose_interval_end_equals_its_value_draws(monkeypatch):
    """Floating point can put an interval's end a hair beyond its value (a mean of zeros with
    its interval clipped at 0): the figure draws without a negative whisker."""
    from simulator.analysis.prison_paper.table import PaperRow, PaperTable
    from simulator.analysis.report.prison_paper_html import paper_figure

    value = 0.1 + 0.2
    rows = [
        PaperRow({"model": "a"}, value, 3, value + 1e-17, value + 0.1),
        PaperRow({"model": "b"}, 0.5, 3, 0.4, 0.5 - 1e-17),
    ]
    table = PaperTable("k", "t", "Figure 9", "mean", ["model"], rows)
    assert paper_figure(table).startswith("data:image/svg+xml")


def test_the_report_takes_the_outcome_labels_measures_takes(run_cli, imported, tmp_path):
    pytest.importorskip("matplotlib")
    env, exp_id = imported
    page = tmp_path / "report.html"
    made = run_cli(["report", exp_id, "-o", str(page), "--labels", "label:annotator_1"], env=env)
    assert made.code == 0, made.err
    assert "outcomes from label:annotator_1" in page.read_text(encoding="utf-8")
    bad = run_cli(["report", exp_id, "-o", str(tmp_path / "x.html"), "--labels", "nope"], env=env)
    assert bad.code == 2 and "--labels" in bad.err and "label:adjudicated" in bad.err
    assert not (tmp_path / "x.html").exists()
