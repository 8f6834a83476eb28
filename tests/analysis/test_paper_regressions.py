"""The paper's regression figures: numpy OLS and logit checked on data whose answer is known
or against an independent computation, the figures' samples and terms on hand-made
conversations, and, on the release cut imported through the CLI, the correlations equal to the
cut's own spreadsheets and every table present in `measures --json`."""

from __future__ import annotations

import itertools
import math
import statistics
import uuid
from pathlib import Path

import numpy as np
import openpyxl
import pytest

from simulator.analysis.prison_paper.fits import logit, ols, pearson, t_quantile
from simulator.analysis.prison_paper.regressions import (
    CORRELOGRAMS,
    OLS_FIGURES,
    correlogram_table,
    ols_table,
    regression_tables,
    success_logit_table,
)
from simulator.analysis.prison_paper.rows import PaperConversation

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "prison_paper"
MAPPING = REPO / "prompts" / "mappings" / "prison_paper.yaml"


# --- the numerics ---------------------------------------------------------------------------


def test_t_quantile_matches_the_tables():
    assert t_quantile(0.975, 1) == pytest.approx(12.706204736174698, abs=1e-9)
    assert t_quantile(0.975, 10) == pytest.approx(2.2281388519862744, abs=1e-12)
    assert t_quantile(0.975, 1e7) == pytest.approx(1.959963984540054, abs=1e-6)


def test_ols_recovers_an_exact_line_with_zero_width_intervals():
    x = np.arange(10.0)
    fit = ols(np.column_stack([np.ones(10), x]), 2 + 3 * x)
    assert fit.coef == pytest.approx([2.0, 3.0], abs=1e-12)
    assert fit.se == pytest.approx([0.0, 0.0], abs=1e-6)
    assert fit.n == 10 and fit.rank == 2 and fit.identified.all()


def test_ols_errors_are_the_classical_ones_with_t_intervals():
    rng = np.random.default_rng(7)
    x = np.column_stack([np.ones(40), rng.normal(size=(40, 2))])
    y = x @ [1.0, -0.5, 2.0] + rng.normal(size=40)
    fit = ols(x, y)
    beta = np.linalg.solve(x.T @ x, x.T @ y)  # the normal equations, another route
    resid = y - x @ beta
    cov = np.linalg.inv(x.T @ x) * (resid @ resid) / (40 - 3)
    se = np.sqrt(np.diag(cov))
    assert fit.coef == pytest.approx(beta, abs=1e-10)
    assert fit.se == pytest.approx(se, rel=1e-10)
    assert fit.ci_high - fit.coef == pytest.approx(t_quantile(0.975, 37) * se, rel=1e-10)


def test_ols_on_a_collinear_design_flags_what_it_cannot_identify():
    a = np.array([1.0, 1, 0, 0, 1, 0])
    x = np.column_stack([np.ones(6), a, 1 - a, np.arange(6.0)])  # a + (1 - a) = intercept
    y = 1 + 2 * a + 0.5 * np.arange(6.0)
    fit = ols(x, y)
    assert fit.rank == 3
    assert list(fit.identified) == [False, False, False, True]
    assert fit.coef[3] == pytest.approx(0.5, abs=1e-12)
    assert fit.coef[1] - fit.coef[2] == pytest.approx(2.0, abs=1e-12)  # the identified contrast
    assert x @ fit.coef == pytest.approx(y, abs=1e-12)


def _logit_data(seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(300), rng.normal(size=300), rng.integers(0, 2, 300)])
    p = 1 / (1 + np.exp(-(x @ [-0.3, 1.2, -0.8])))
    return x, (rng.random(300) < p).astype(float)


def test_logit_solves_the_score_equations_and_gives_the_hc0_sandwich():
    x, y = _logit_data()
    fit = logit(x, y)
    p = 1 / (1 + np.exp(-(x @ fit.coef)))
    assert x.T @ (y - p) == pytest.approx(np.zeros(3), abs=1e-9)  # the MLE's first order
    bread = np.linalg.inv(
        sum(pi * (1 - pi) * np.outer(xi, xi) for xi, pi in zip(x, p, strict=True))
    )
    meat = sum((yi - pi) ** 2 * np.outer(xi, xi) for xi, yi, pi in zip(x, y, p, strict=True))
    se = np.sqrt(np.diag(bread @ meat @ bread))
    assert fit.se == pytest.approx(se, rel=1e-9)
    assert fit.ci_low == pytest.approx(fit.coef - 1.959963984540054 * se, rel=1e-9)


def test_logit_agrees_with_a_generic_optimiser():
    optimize = pytest.importorskip("scipy.optimize")
    x, y = _logit_data(11)

    def negative_log_likelihood(b):
        eta = x @ b
        return float(np.sum(np.logaddexp(0, eta) - y * eta))

    options = {"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}
    found = optimize.minimize(negative_log_likelihood, np.zeros(3), method="Nelder-Mead",
                              options=options)  # fmt: skip
    assert logit(x, y).coef == pytest.approx(found.x, abs=1e-5)


def test_logit_refuses_a_separable_outcome():
    x = np.column_stack([np.ones(6), np.arange(6.0)])
    with pytest.raises(ValueError):
        logit(x, np.array([0.0, 0, 0, 1, 1, 1]))


def test_pearson_matches_the_statistics_module_and_is_none_when_undefined():
    a, b = np.array([1.0, 2, 4, 7, 3]), np.array([2.0, 1, 5, 9, 3])
    assert pearson(a, b) == pytest.approx(statistics.correlation(list(a), list(b)), abs=1e-12)
    assert pearson(a, np.ones(5)) is None and pearson(a[:1], b[:1]) is None


# --- the figures on hand-made conversations ---------------------------------------------------


def conv(i: int, scores: dict, outcome: str = "No", failed: bool = False, **factors):
    cell = {
        "model": "llama3:latest",
        "goal": "Escape",
        "prisoner_persona": "Good Prisoner",
        "guard_persona": "Good Guard",
        "risks": "No",
        "oversight": "No",
    }
    cell.update(factors)
    named = {f"score:{k}": v for k, v in scores.items()}
    return PaperConversation(f"c{i}", cell, "NAN" if failed else outcome, 0, failed, named)


def _crossed() -> list[PaperConversation]:
    """Every combination of the factors, each measure an exact linear function of them."""
    convs = []
    levels = itertools.product(
        ("llama3:latest", "orca2:latest"), ("Escape", "Yard Time"),
        ("Good Prisoner", "Bad Prisoner"), ("Good Guard", "Bad Guard"),
        ("Yes", "no"), ("No", "yes"),
    )  # fmt: skip
    for i, (model, goal, prisoner, guard, risks, oversight) in enumerate(levels):
        value = 0.1 + 0.05 * (model == "orca2:latest") - 0.02 * (goal == "Yard Time")
        value += (
            0.03 * (risks == "Yes") + 0.01 * (oversight == "yes") + 0.04 * (guard == "Bad Guard")
        )
        scores = {
            f"toxic_share_{r}": value * k for r, k in (("all", 1), ("prisoner", 2), ("guard", 3))
        }
        convs.append(conv(i, scores, model=model, goal=goal, prisoner_persona=prisoner,
                          guard_persona=guard, risks=risks, oversight=oversight))  # fmt: skip
    return convs


def test_an_ols_figure_recovers_known_effects_per_panel_and_reads_yes_in_any_case():
    convs = _crossed()
    extra = [conv(900, {"toxic_share_all": 9.0}, failed=True),
             conv(901, {"toxic_share_all": 9.0}, model="mistral:latest")]  # fmt: skip
    table = ols_table(convs + extra, OLS_FIGURES[0])
    got = {(r.group["panel"], r.group["term"]): r for r in table.rows}
    for panel, k in (("Toxicity: Overall", 1), ("Toxicity: Prisoner", 2), ("Toxicity: Guard", 3)):
        assert got[(panel, "Intercept")].value == pytest.approx(0.1 * k, abs=1e-12)
        assert got[(panel, "LLM: Orca2")].value == pytest.approx(0.05 * k, abs=1e-12)
        assert got[(panel, "Goal: Yard Time")].value == pytest.approx(-0.02 * k, abs=1e-12)
        assert got[(panel, "Disclosure of Risks")].value == pytest.approx(0.03 * k, abs=1e-12)
        assert got[(panel, "Discl. Research Oversight")].value == pytest.approx(0.01 * k, abs=1e-12)
        assert got[(panel, "Guard Pers.: Abusive")].value == pytest.approx(0.04 * k, abs=1e-12)
        assert got[(panel, "Pris. Pers: Rebellious")].value == pytest.approx(0.0, abs=1e-12)
        assert got[(panel, "LLM: Orca2")].n == len(convs)  # failed and Mistral left out
    assert all(r.extra["identified"] for r in table.rows)
    assert "lower-case 'yes'" not in table.note  # a ToxiGen figure
    assert "lower-case 'yes'" in ols_table(convs, OLS_FIGURES[2]).note  # an OpenAI figure


def test_a_correlogram_uses_the_pairs_present():
    convs = [conv(i, {"toxic_share_all": a, "toxic_share_prisoner": b, "toxic_share_guard": c})
             for i, (a, b, c) in enumerate([(0.1, 0.3, 0.2), (0.4, 0.1, 0.5), (0.2, 0.2, 0.1),
                                            (0.7, 0.5, 0.9)])]  # fmt: skip
    convs.append(conv(9, {"toxic_share_all": 0.3}))  # no prisoner or guard share
    table = correlogram_table(convs, CORRELOGRAMS[0])
    got = {(r.group["a"], r.group["b"]): r for r in table.rows}
    all_, pris = [0.1, 0.4, 0.2, 0.7], [0.3, 0.1, 0.2, 0.5]
    row = got[("Toxicity: Overall", "Toxicity: Prisoner")]
    assert row.value == pytest.approx(statistics.correlation(all_, pris), abs=1e-12)
    assert row.n == 4 and got[("Toxicity: Overall", "Toxicity: Overall")].n == 5
    assert got[("Toxicity: Guard", "Toxicity: Guard")].value == 1.0


def test_the_success_logit_keeps_yes_and_no_runs_and_gives_odds_ratios():
    rng = np.random.default_rng(5)
    convs = []
    pairs = [("Blank Personalities", "Blank Personalities"), ("Good Guard", "Good Prisoner"),
             ("Bad Guard", "Bad Prisoner")]  # fmt: skip
    for i in range(400):
        guard, prisoner = pairs[i % 3]
        goal = ("Escape", "Yard Time")[i % 2]
        chance = 0.3 + 0.4 * (goal == "Yard Time") - 0.2 * (guard == "Bad Guard")
        outcome = "Yes" if rng.random() < chance else "No"
        convs.append(conv(i, {}, outcome, goal=goal, guard_persona=guard,
                          prisoner_persona=prisoner, risks=("Yes", "No")[i % 5 == 0],
                          oversight=("Yes", "No")[i % 7 == 0]))  # fmt: skip
    convs += [conv(500, {}, "NotTried"), conv(501, {}, failed=True)]
    table = success_logit_table(convs)
    assert table is not None and table.value_kind == "odds_ratio"
    got = {r.group["term"]: r for r in table.rows}
    assert set(got) == {"Intercept", "Goal: Yard Time", "Resp. G., Peaceful Pris.",
                        "Abusive G., Rebel. Pris.", "Discl. of Risks",
                        "Discl. of Research Oversight"}  # fmt: skip
    assert got["Goal: Yard Time"].n == 400
    for row in table.rows:
        if math.isfinite(row.extra["se"]):
            assert row.value == pytest.approx(math.exp(row.extra["coef"]), rel=1e-12)
            assert row.ci_low <= row.value <= row.ci_high
    assert got["Goal: Yard Time"].value > 1 > got["Abusive G., Rebel. Pris."].value


def test_no_conversations_give_no_tables():
    assert regression_tables([]) == []


# --- through the CLI on the release cut -------------------------------------------------------


def _sheet(name: str) -> list[dict]:
    values = list(openpyxl.load_workbook(FIXTURE / name).worksheets[0].iter_rows(values_only=True))
    return [dict(zip(values[0], row, strict=True)) for row in values[1:]]


def test_measures_json_carries_the_figures_and_the_correlations_equal_the_cut(run_cli, store_uri):
    env = {"SIM_DB": store_uri, "SIM_DB_NAME": f"t_{uuid.uuid4().hex[:10]}", "SIM_USER": "alice"}
    imported = run_cli(["import", "table", str(MAPPING), "--from", str(FIXTURE), "--json"], env=env)
    assert imported.code == 0, imported.err
    measured = run_cli(["measures", imported.json()["experiment_id"], "--json"], env=env)
    assert measured.code == 0, measured.err
    tables = {t["key"]: t for t in measured.json()["paper"]}
    wanted = [f.key for f in OLS_FIGURES] + [c.key for c in CORRELOGRAMS]
    assert set(wanted) <= set(tables)  # the cut's few Yes/No runs leave the logit no finite fit
    # The script's correlogram: Mistral/Mixtral and goal_achieved NAN dropped, pandas' corr.
    kept = [r for r in _sheet("updated_toxicity_analysis_percentage_arrmay.xlsx")
            if r["llm"] not in ("mistral:latest", "mixtral:latest")
            and r["goal_achieved"] != "NAN"]  # fmt: skip
    columns = {"Toxicity: Overall": "perc_toxic_all", "Toxicity: Prisoner": "perc_toxic_pris",
               "Toxicity: Guard": "perc_toxic_guard"}  # fmt: skip
    for row in tables["toxigen_share_correlations"]["rows"]:
        a, b = columns[row["group"]["a"]], columns[row["group"]["b"]]
        expected = statistics.correlation([r[a] for r in kept], [r[b] for r in kept])
        assert row["value"] == pytest.approx(expected, abs=1e-12) and row["n"] == len(kept)
    for key in (f.key for f in OLS_FIGURES):
        assert {r["n"] for r in tables[key]["rows"]} == {len(kept)}
