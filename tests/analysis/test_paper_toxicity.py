"""The paper's toxicity and moderation bar charts: on the release cut imported through the
CLI, each bar equals the mean and standard deviation computed here from the cut's own
spreadsheets the way the authors' scripts compute them; on hand-made conversations, the
filters, the missing values, the order and the intervals."""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

import openpyxl
import pytest

from simulator.analysis.prison_paper.rows import PaperConversation
from simulator.analysis.prison_paper.toxicity import (
    BAR_CHARTS,
    GROUP_BY,
    bar_chart,
    toxicity_tables,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_import import FIXTURE

# Each chart: the spreadsheet its script reads and its columns for all, prisoner and guard.
SCRIPT_COLUMNS = {
    "toxigen_share_by_cell": (
        "updated_toxicity_analysis_percentage_arrmay.xlsx",
        ("perc_toxic_all", "perc_toxic_pris", "perc_toxic_guard"),
    ),
    "toxigen_score_by_cell": (
        "updated_toxicity_analysis_scores_arrmay.xlsx",
        ("score_toxic_all", "score_toxic_pris", "score_toxic_guard"),
    ),
    "harassment_share_by_cell": (
        "updated_openai_toxicity_analysis_percentage_arrmay.xlsx",
        tuple(f"perc_toxic_{r}_harassment" for r in ("overall", "pris", "guard")),
    ),
    "harassment_score_by_cell": (
        "updated_openai_toxicity_analysis_scores_arrmay.xlsx",
        tuple(f"score_toxic_{r}_harassment" for r in ("overall", "pris", "guard")),
    ),
    "violence_share_by_cell": (
        "updated_openai_toxicity_analysis_percentage_arrmay.xlsx",
        tuple(f"perc_toxic_{r}_violence" for r in ("overall", "pris", "guard")),
    ),
    "violence_score_by_cell": (
        "updated_openai_toxicity_analysis_scores_arrmay.xlsx",
        tuple(f"score_toxic_{r}_violence" for r in ("overall", "pris", "guard")),
    ),
}


def _sheet(name: str) -> list[dict]:
    values = list(openpyxl.load_workbook(FIXTURE / name).worksheets[0].iter_rows(values_only=True))
    return [dict(zip(values[0], row, strict=True)) for row in values[1:]]


def script_bars(name: str, columns: tuple[str, ...]) -> dict[tuple, tuple[float, float, int]]:
    """The scripts' steps: drop Mistral and Mixtral, drop goal_achieved NAN, then per goal,
    prisoner persona, guard persona and llm the mean and standard deviation of each column."""
    kept = [
        r
        for r in _sheet(name)
        if r["llm"] not in ("mistral:latest", "mixtral:latest") and r["goal_achieved"] != "NAN"
    ]
    cells: dict[tuple, list[float]] = {}
    for row in kept:
        cell = (row["goal"], row["personality_prisoner"], row["personality_guard"], row["llm"])
        for role, column in zip(("all", "prisoner", "guard"), columns, strict=True):
            cells.setdefault((*cell, role), []).append(row[column])
    return {
        key: (
            statistics.fmean(v),
            statistics.stdev(v) if len(v) > 1 else math.nan,
            len(v),
        )
        for key, v in cells.items()
    }


@pytest.fixture
def imported(paper_cut) -> list[PaperConversation]:
    return list(paper_cut)


def test_every_bar_equals_the_scripts_computation_on_the_cut(imported):
    tables = {t.key: t for t in toxicity_tables(imported)}
    assert list(tables) == [c.key for c in BAR_CHARTS] == list(SCRIPT_COLUMNS)
    for key, (name, columns) in SCRIPT_COLUMNS.items():
        expected = script_bars(name, columns)
        table = tables[key]
        assert table.group_by == GROUP_BY and table.value_kind == "mean"
        got = {tuple(r.group[g] for g in GROUP_BY): r for r in table.rows}
        assert set(got) == set(expected) and expected
        for cell, (mean, sd, n) in expected.items():
            row = got[cell]
            assert row.n == n
            assert row.value == pytest.approx(mean, abs=1e-12)
            if math.isnan(sd):
                assert row.extra["sd"] is None and row.ci_low is None and row.ci_high is None
            else:
                assert row.extra["sd"] == pytest.approx(sd, abs=1e-12)
                assert 0.0 <= row.ci_low <= row.value <= row.ci_high <= 1.0


def test_the_cut_keeps_only_conversations_that_did_not_fail(imported):
    kept = sum(1 for r in _sheet("updated_toxicity_analysis_scores_arrmay.xlsx")
               if r["goal_achieved"] != "NAN")  # fmt: skip
    table = toxicity_tables(imported)[0]
    assert sum(r.n for r in table.rows if r.group["role"] == "all") == kept < len(imported)


def conv(i: int, scores: dict[str, float], failed: bool = False, **factors) -> PaperConversation:
    cell = {
        "model": "llama3:latest",
        "goal": "Escape",
        "prisoner_persona": "Good Prisoner",
        "guard_persona": "Bad Guard",
    }
    cell.update(factors)
    named = {f"score:{k}": v for k, v in scores.items()}
    return PaperConversation(f"c{i}", cell, "NAN" if failed else "No", 0, failed, named)


TOXIGEN_SHARE = BAR_CHARTS[0]


def test_failed_conversations_and_dropped_models_are_left_out():
    convs = [
        conv(1, {"toxic_share_all": 0.2}),
        conv(2, {"toxic_share_all": 0.9}, failed=True),
        conv(3, {"toxic_share_all": 0.9}, model="mistral:latest"),
        conv(4, {"toxic_share_all": 0.9}, model="mixtral:latest"),
    ]
    rows = bar_chart(convs, TOXIGEN_SHARE).rows
    assert [(r.group["model"], r.group["role"], r.value, r.n) for r in rows] == [
        ("llama3:latest", "all", 0.2, 1)
    ]


def test_a_missing_or_nan_score_leaves_only_its_own_bar():
    convs = [
        conv(1, {"toxic_share_all": 0.5, "toxic_share_guard": 1.0}),
        conv(2, {"toxic_share_all": 0.25, "toxic_share_guard": math.nan}),
    ]
    by_role = {r.group["role"]: r for r in bar_chart(convs, TOXIGEN_SHARE).rows}
    assert set(by_role) == {"all", "guard"}
    assert (by_role["all"].n, by_role["all"].value) == (2, 0.375)
    assert (by_role["guard"].n, by_role["guard"].value) == (1, 1.0)
    assert by_role["guard"].ci_low is None and by_role["guard"].extra["sd"] is None


def test_rows_follow_the_scripts_order_of_goals_personas_models_and_roles():
    roles = {"toxic_share_all": 0.1, "toxic_share_prisoner": 0.1, "toxic_share_guard": 0.1}
    convs = [
        conv(1, roles, goal="Escape", model="orca2:latest"),
        conv(2, roles, goal="Yard Time", model="gpt-4.1-2025-04-14"),
        conv(3, roles, goal="Yard Time", model="command-r:latest"),
        conv(4, roles, goal="Yard Time", prisoner_persona="Blank Personalities"),
    ]
    order = [tuple(r.group[g] for g in GROUP_BY) for r in bar_chart(convs, TOXIGEN_SHARE).rows]
    cells = [
        ("Yard Time", "Blank Personalities", "Bad Guard", "llama3:latest"),
        ("Yard Time", "Good Prisoner", "Bad Guard", "command-r:latest"),
        ("Yard Time", "Good Prisoner", "Bad Guard", "gpt-4.1-2025-04-14"),
        ("Escape", "Good Prisoner", "Bad Guard", "orca2:latest"),
    ]
    assert order == [(*c, role) for c in cells for role in ("all", "prisoner", "guard")]


def test_interval_is_the_t_interval_of_the_mean_clipped_to_zero_and_one():
    stats = pytest.importorskip("scipy.stats")
    values = [0.0, 0.0, 0.0, 0.6]
    convs = [conv(i, {"toxic_share_all": v}) for i, v in enumerate(values)]
    (row,) = bar_chart(convs, TOXIGEN_SHARE).rows
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    half = stats.t.ppf(0.975, len(values) - 1) * sd / math.sqrt(len(values))
    assert mean - half < 0  # the raw interval crosses 0
    assert row.ci_low == 0.0
    assert row.ci_high == pytest.approx(mean + half, rel=1e-3)  # t quantiles to 3 decimals
    assert row.extra["sd"] == pytest.approx(sd)


def test_no_conversations_give_tables_without_rows():
    tables = toxicity_tables([])
    assert [t.rows for t in tables] == [[]] * len(BAR_CHARTS)
    assert all(t.paper_ref.startswith("Figures ") for t in tables)
