"""Agreement, kappa and the confusion matrix: by hand, against sklearn, against the prison
paper script's own cleaning, and the judge's answers read as the annotators' labels."""

from __future__ import annotations

import csv
import math
import random
from pathlib import Path

import pytest

from simulator.analysis.agreement import agreement, agreement_by_group, clean_label, cohen_kappa
from simulator.analysis.label_sources import (
    as_labels,
    imported_label,
    judge_prison_goal,
    third_of_message,
    third_of_turn,
)
from simulator.analysis.scorers.rubric import load_rubric

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "prison_paper" / "agreement_labels.csv"


def test_hand_computed_two_by_two():
    # 10 pairs: 4 yes/yes, 3 no/no, 2 yes/no, 1 no/yes
    pairs = [("Yes", "Yes")] * 4 + [("No", "No")] * 3 + [("Yes", "No")] * 2 + [("No", "Yes")]
    result = agreement(pairs)
    assert result.labels == ["no", "yes"]
    assert result.matrix == [[3, 1], [2, 4]]
    assert (result.n, result.agreeing, result.disagreeing) == (10, 7, 3)
    assert result.observed == pytest.approx(0.7)
    # p_e = (4*5 + 6*5) / 100 = 0.5; kappa = (0.7 - 0.5) / 0.5
    assert result.kappa == pytest.approx(0.4)


def test_perfect_and_undefined_kappa():
    assert agreement([("a", "a"), ("b", "b")]).kappa == pytest.approx(1.0)
    same = agreement([("No", "no "), ("NO", "No")])  # one label on both sides: undefined
    assert same.n == 2 and same.observed == 1 and same.kappa is None
    empty = agreement([])
    assert empty.n == 0 and empty.observed is None and empty.kappa is None
    assert cohen_kappa([]) is None


def test_cleaning_and_left_out_pairs_follow_the_script():
    assert clean_label(" NotTried ") == "nottried"
    assert clean_label(1) == "1" and clean_label("NAN") == "nan"  # NAN is a label
    assert clean_label(None) is None and clean_label(float("nan")) is None
    result = agreement([("Yes", None), (None, "No"), (None, None), ("Yes ", "yes")])
    assert (result.n, result.left_out, result.missing_a, result.missing_b) == (1, 3, 2, 2)
    assert result.matrix == [[1]]


def test_matches_sklearn_on_random_labels():
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = random.Random(7)
    vocabulary = ["Yes", "No", "NotTried", "NAN"]
    for _ in range(50):
        size = rng.randint(2, 60)
        a = [rng.choice(vocabulary) for _ in range(size)]
        b = [x if rng.random() < 0.6 else rng.choice(vocabulary) for x in a]
        expected = sklearn.cohen_kappa_score([x.lower() for x in a], [x.lower() for x in b])
        result = agreement(zip(a, b, strict=True))
        got = result.kappa
        if math.isnan(expected):
            assert got is None
        else:
            assert got == pytest.approx(expected)
        lower_a, lower_b = [x.lower() for x in a], [x.lower() for x in b]
        confusion = sklearn.confusion_matrix(lower_a, lower_b, labels=result.labels)
        assert result.matrix == confusion.tolist()


def fixture_rows() -> list[dict]:
    with FIXTURE.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def script_metrics(rows: list[dict], col1: str, col2: str) -> tuple[int, int, float]:
    """The release script's compute_metrics, as it is written there, on these rows."""
    pd = pytest.importorskip("pandas")
    sklearn = pytest.importorskip("sklearn.metrics")
    df = pd.DataFrame(rows)
    sub = df[[col1, col2]].dropna().astype(str).apply(lambda x: x.str.lower().str.strip())
    n_disagree = int((sub[col1] != sub[col2]).sum())
    return len(sub), n_disagree, float(sklearn.cohen_kappa_score(sub[col1], sub[col2]))


@pytest.mark.parametrize("columns", [("GOAL1", "GOAL2"), ("TURN1_DISCR", "TURN2_DISCR")])
def test_per_model_figures_equal_the_release_script_on_its_own_rows(columns):
    rows = fixture_rows()
    groups = agreement_by_group((r["model"], r[columns[0]], r[columns[1]]) for r in rows)
    assert list(groups) == ["command-r", "gpt", "orca2", "llama3"]
    for model, result in groups.items():
        mine = [r for r in rows if r["model"] == model]
        n, disagreeing, kappa = script_metrics(mine, *columns)
        assert (result.n, result.disagreeing) == (n, disagreeing)
        if math.isnan(kappa):
            assert result.kappa is None
        else:
            assert result.kappa == pytest.approx(kappa)


def test_thirds_follow_the_workbook_formula():
    assert [third_of_turn(t) for t in (None, 1, 3, 4, 6, 7, 9, 10)] == [0, 1, 1, 2, 2, 3, 3, 4]
    assert [third_of_message(m, 9) for m in (None, 1, 3, 4, 6, 7, 9)] == [0, 1, 1, 2, 2, 3, 3]
    assert third_of_message(5, None) is None
    assert imported_label({"label": "Yes", "turn": 5, "third": 2}) == {"goal": "Yes", "third": 2}
    assert imported_label({"turn": None, "third": None}) == {"third": 0}
    assert imported_label({"turn": 8}) == {"third": 3}
    assert as_labels("label:annotator_1", {"error": "x"}) == {}


def judge_answer(**values) -> dict:
    """A judge answer in the rubric's shape, checked against the shipped rubric's fields."""
    rubric = load_rubric("prison_goal")
    answer = {
        "attempted": "no",
        "succeeded": "no",
        "turn": None,
        "conversational_failure": "no",
        "failure_kind": "none",
        **values,
    }
    assert set(answer) == set(rubric.fields)
    return answer


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, {"goal": "NotTried", "third": 0}),
        ({"attempted": "yes", "turn": 4}, {"goal": "No", "third": 0}),
        ({"attempted": "yes", "succeeded": "yes", "turn": 2}, {"goal": "Yes", "third": 1}),
        ({"attempted": "yes", "succeeded": "yes", "turn": 12}, {"goal": "Yes", "third": 3}),
        (
            {"attempted": "yes", "conversational_failure": "yes", "failure_kind": "repetition"},
            {"goal": "NAN", "third": 0},
        ),
    ],
)
def test_judge_answers_read_as_annotator_labels(values, expected):
    assert judge_prison_goal(judge_answer(**values), n_messages=12) == expected
    assert as_labels("judge:prison_goal", judge_answer(**values), 12) == expected
