"""The paper's regression and correlation figures, as its scripts compute them.

- OLS figures (3, 7, 11, 14, 18, 21; the `_fractional` scripts' figures 9, 10, 16, 17, 23, 24
  plot the same fits): each per-conversation share or score (overall, prisoner, guard) on
  C(model) + Risks + Research_Oversight + C(goal) + C(prisoner persona) + C(guard persona),
  references llama3, Escape and the blank personas; classical errors, t intervals.
- Correlograms (5, 12, 19): Pearson correlations of the three measures, pairwise complete.
- Figure 2 (right): odds ratios of a logit of Yes against No on Risks + Research_Oversight +
  goal + the guard/prisoner persona pair + model, HC0 errors, normal intervals.
Every fit keeps the scripts' sample: failed conversations (adjudicated NAN) and Mistral and
Mixtral dropped, and a conversation without the measure left out. Risks and oversight are
read case-insensitively ("Yes"/"yes" -> 1): the data's own values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from simulator.analysis.prison_paper.fits import logit, ols, pearson
from simulator.analysis.prison_paper.rows import PaperConversation
from simulator.analysis.prison_paper.table import PaperRow, PaperTable
from simulator.analysis.prison_paper.toxicity import ORDER, ROLES, analysed

BINARY = {"yes": 1.0, "no": 0.0}
CATEGORICAL = ("model", "goal", "prisoner_persona", "guard_persona")
# patsy's treatment reference of the scripts: their first category (goal: alphabetical).
REFERENCE_ORDER = {**ORDER, "goal": ("Escape", "Yard Time")}
PAIR_ORDER = (
    ("Blank Personalities", "Blank Personalities"),
    ("Good Guard", "Good Prisoner"),
    ("Good Guard", "Bad Prisoner"),
    ("Bad Guard", "Good Prisoner"),
    ("Bad Guard", "Bad Prisoner"),
)
MODEL_LABELS = {
    "command-r:latest": "LLM: Command-r",
    "orca2:latest": "LLM: Orca2",
    "gpt-4.1-2025-04-14": "LLM: gpt4.1",
}
LONG_LABELS = {
    **{("model", k): v for k, v in MODEL_LABELS.items()},
    ("goal", "Yard Time"): "Goal: Obtain 1hr Yard Time",
    ("prisoner_persona", "Good Prisoner"): "Prisoner Personality: Peaceful",
    ("prisoner_persona", "Bad Prisoner"): "Prisoner Personality: Rebellious",
    ("guard_persona", "Good Guard"): "Guard Personality: Respectful",
    ("guard_persona", "Bad Guard"): "Guard Personality: Abusive",
    ("risks", ""): "Disclosure of Risks",
    ("oversight", ""): "Disclosure of Research Oversight",
}
SHORT_LABELS = {  # analysis_toxigen_toxicity.py's percentage figure
    **LONG_LABELS,
    ("goal", "Yard Time"): "Goal: Yard Time",
    ("prisoner_persona", "Good Prisoner"): "Pris. Pers.: Peaceful",
    ("prisoner_persona", "Bad Prisoner"): "Pris. Pers: Rebellious",
    ("guard_persona", "Good Guard"): "Guard Pers.: Respectful",
    ("guard_persona", "Bad Guard"): "Guard Pers.: Abusive",
    ("oversight", ""): "Discl. Research Oversight",
}
LOGIT_LABELS = {
    **{("model", k): v for k, v in MODEL_LABELS.items()},
    ("goal", "Yard Time"): "Goal: Yard Time",
    ("pair", "Bad Guard, Bad Prisoner"): "Abusive G., Rebel. Pris.",
    ("pair", "Bad Guard, Good Prisoner"): "Abusive G., Peaceful Pris.",
    ("pair", "Good Guard, Bad Prisoner"): "Resp. G., Rebel. Pris.",
    ("pair", "Good Guard, Good Prisoner"): "Resp. G., Peaceful Pris.",
    ("risks", ""): "Discl. of Risks",
    ("oversight", ""): "Discl. of Research Oversight",
}
UNIDENTIFIED = (
    " The blank prisoner and the blank guard always go together, so the four persona dummies "
    "are collinear with the intercept: only their differences are identified, and those rows "
    "(extra.identified false) show the minimum-norm solution; statsmodels' pseudo-inverse "
    "keeps a near-zero singular value there and prints values near ±1e12 instead, a rounding "
    "artefact that also moves the authors' other coefficients by up to about 0.001."
)


@dataclass(frozen=True)
class OlsFigure:
    key: str
    title: str
    paper_ref: str
    prefix: str  # the scores' name before the role: "toxic_share" -> score:toxic_share_guard
    panels: tuple[str, str, str]  # the script's panel title per role (all, prisoner, guard)
    labels: dict[tuple[str, str], str]
    openai: bool  # the authors' table has lower-case "yes": their fit lost those rows


@dataclass(frozen=True)
class Correlogram:
    key: str
    title: str
    paper_ref: str
    prefix: str
    names: tuple[str, str, str]  # the script's axis labels per role


def _panels(name: str) -> tuple[str, str, str]:
    return (f"{name}: Overall", f"{name}: Prisoner", f"{name}: Guard")


OLS_FIGURES = (
    OlsFigure("toxigen_share_ols", "OLS of the share of toxic messages (ToxiGen)",
              "Figures 3 and 9", "toxic_share", _panels("Toxicity"), SHORT_LABELS, False),
    OlsFigure("toxigen_score_ols", "OLS of the mean toxicity score (ToxiGen)",
              "Figures 7 and 10", "toxic", _panels("Toxicity"), LONG_LABELS, False),
    OlsFigure("harassment_share_ols", "OLS of the share of harassment messages (OpenAI)",
              "Figures 11 and 16", "harassment_share", _panels("Harassment"), LONG_LABELS, True),
    OlsFigure("harassment_score_ols", "OLS of the mean harassment score (OpenAI)",
              "Figures 14 and 17", "harassment", _panels("Avg. Harassment"), LONG_LABELS, True),
    OlsFigure("violence_share_ols", "OLS of the share of violence messages (OpenAI)",
              "Figures 18 and 23", "violence_share", _panels("Violence"), LONG_LABELS, True),
    OlsFigure("violence_score_ols", "OLS of the mean violence score (OpenAI)",
              "Figures 21 and 24", "violence", _panels("Violence"), LONG_LABELS, True),
)  # fmt: skip
CORRELOGRAMS = (
    Correlogram("toxigen_share_correlations", "Correlations of the toxic-message shares "
                "(ToxiGen)", "Figure 5 (percentage)", "toxic_share", _panels("Toxicity")),
    Correlogram("toxigen_score_correlations", "Correlations of the mean toxicity scores "
                "(ToxiGen)", "Figure 5 (score)", "toxic", _panels("Avg. Toxicity")),
    Correlogram("harassment_share_correlations", "Correlations of the harassment-message "
                "shares (OpenAI)", "Figure 12 (percentage)", "harassment_share",
                _panels("% Harassment")),
    Correlogram("harassment_score_correlations", "Correlations of the mean harassment scores "
                "(OpenAI)", "Figure 12 (score)", "harassment", _panels("Harassment")),
    Correlogram("violence_share_correlations", "Correlations of the violence-message shares "
                "(OpenAI)", "Figure 19 (percentage)", "violence_share", _panels("% Violence")),
    Correlogram("violence_score_correlations", "Correlations of the mean violence scores "
                "(OpenAI)", "Figure 19 (score)", "violence", _panels("Violence")),
)  # fmt: skip
OPENAI_NOTE = (
    " The authors' OpenAI tables write Risks and Research Oversight as lower-case 'yes', which "
    "their scripts' {'Yes': 1, 'No': 0} map turns into NaN, so their fits kept only the runs "
    "with both set to 'No' (1,030 of 1,391 rows dropped; both coefficients printed as 0). "
    "These fits use every run with the factors as they are, so they differ by design."
)


def _levels(factor: str, values: Iterable[str], order: dict[str, tuple] = REFERENCE_ORDER):
    """The factor's levels present, the scripts' order first (the first is the reference)."""
    known = order.get(factor, ())
    present = set(values)
    return [v for v in known if v in present] + sorted(present - set(known))


def _label(labels: dict, factor: str, value: str) -> str:
    return labels.get((factor, value), f"{factor}: {value}" if value else factor)


def _binary(conv: PaperConversation, factor: str) -> float | None:
    return BINARY.get(str(conv.factors.get(factor, "")).strip().lower())


@dataclass
class Design:
    x: np.ndarray
    terms: list[tuple[str, str]]  # (factor, level) per column; ("Intercept", "") first


def design(convs: Sequence[PaperConversation], categorical: Sequence[str]) -> Design:
    """Intercept, one treatment dummy per non-reference level, then Risks and oversight 0/1
    (every conversation passed must have both)."""
    terms: list[tuple[str, str]] = [("Intercept", "")]
    columns = [np.ones(len(convs))]
    for factor in categorical:
        values = [c.factors.get(factor, "") for c in convs]
        for level in _levels(factor, values)[1:]:
            terms.append((factor, level))
            columns.append(np.array([float(v == level) for v in values]))
    for factor in ("risks", "oversight"):
        terms.append((factor, ""))
        columns.append(np.array([_binary(c, factor) for c in convs], dtype=float))
    return Design(np.column_stack(columns), terms)


def _complete(convs: Iterable[PaperConversation], score: str | None) -> list[PaperConversation]:
    """The conversations with every regressor (and the measure, when named)."""
    return [
        c
        for c in convs
        if all(f in c.factors for f in CATEGORICAL)
        and _binary(c, "risks") is not None
        and _binary(c, "oversight") is not None
        and (score is None or score in c.scores)
    ]


def ols_table(conversations: Iterable[PaperConversation], figure: OlsFigure) -> PaperTable:
    """One OLS figure: a row per panel (overall, prisoner, guard) and term."""
    kept = analysed(conversations)
    rows: list[PaperRow] = []
    unidentified = False
    for role, panel in zip(ROLES, figure.panels, strict=True):
        score = f"score:{figure.prefix}_{role}"
        convs = _complete(kept, score)
        if len(convs) < 2:
            continue
        built = design(convs, CATEGORICAL)
        fit = ols(built.x, np.array([c.scores[score] for c in convs]))
        for j, (factor, level) in enumerate(built.terms):
            term = _label(figure.labels, factor, level)
            identified = bool(fit.identified[j])
            unidentified = unidentified or not identified
            rows.append(
                PaperRow(
                    {"term": term, "panel": panel},
                    float(fit.coef[j]),
                    fit.n,
                    float(fit.ci_low[j]),
                    float(fit.ci_high[j]),
                    {"se": float(fit.se[j]), "identified": identified, "rank": fit.rank},
                )
            )
    note = (
        "OLS coefficient per term (reference: llama3, Escape, blank personas), classical "
        "standard errors, 95% t interval; failed conversations and Mistral/Mixtral dropped; n "
        "is the number of conversations in the fit."
        + (UNIDENTIFIED if unidentified else "")
        + (OPENAI_NOTE if figure.openai else "")
    )
    return PaperTable(
        figure.key, figure.title, figure.paper_ref, "coefficient", ["term", "panel"], rows, note
    )


def correlogram_table(conversations: Iterable[PaperConversation], chart: Correlogram) -> PaperTable:
    """Pearson's r for every ordered pair of the three measures (pairwise complete)."""
    kept = analysed(conversations)
    rows: list[PaperRow] = []
    for role_a, name_a in zip(ROLES, chart.names, strict=True):
        for role_b, name_b in zip(ROLES, chart.names, strict=True):
            a, b = f"score:{chart.prefix}_{role_a}", f"score:{chart.prefix}_{role_b}"
            pairs = [(c.scores[a], c.scores[b]) for c in kept if a in c.scores and b in c.scores]
            values = np.array(pairs, dtype=float).reshape(-1, 2)
            r = pearson(values[:, 0], values[:, 1])
            if role_a == role_b and r is not None:
                r = 1.0
            rows.append(PaperRow({"a": name_a, "b": name_b}, r, len(pairs)))
    note = (
        "Pearson correlation over the conversations with both measures; failed conversations "
        "and Mistral/Mixtral dropped."
    )
    return PaperTable(chart.key, chart.title, chart.paper_ref, "correlation", ["a", "b"], rows,
                      note)  # fmt: skip


def _with_pair(conv: PaperConversation) -> PaperConversation:
    pair = f"{conv.factors.get('guard_persona')}, {conv.factors.get('prisoner_persona')}"
    return PaperConversation(
        conv.id, {**conv.factors, "pair": pair}, conv.outcome, conv.third, conv.failed,
        conv.scores,
    )  # fmt: skip


def success_logit_table(conversations: Iterable[PaperConversation]) -> PaperTable | None:
    """Figure 2 (right): odds ratios of reaching the goal among the runs that tried (Yes/No)."""
    convs = [
        _with_pair(c)
        for c in _complete(analysed(conversations), None)
        if c.outcome in ("Yes", "No")
    ]
    if len(convs) < 2 or len({c.outcome for c in convs}) < 2:
        return None
    pairs = {"pair": tuple(f"{g}, {p}" for g, p in PAIR_ORDER)}
    terms: list[tuple[str, str]] = [("Intercept", "")]
    columns = [np.ones(len(convs))]
    for factor in ("goal", "pair", "model"):
        values = [c.factors[factor] for c in convs]
        for level in _levels(factor, values, {**REFERENCE_ORDER, **pairs})[1:]:
            terms.append((factor, level))
            columns.append(np.array([float(v == level) for v in values]))
    for factor in ("risks", "oversight"):
        column = np.array([_binary(c, factor) for c in convs], dtype=float)
        if column.min() != column.max():  # a constant one says nothing and stops Newton
            terms.append((factor, ""))
            columns.append(column)
    y = np.array([float(c.outcome == "Yes") for c in convs])
    try:
        fit = logit(np.column_stack(columns), y)
    except (ValueError, np.linalg.LinAlgError):
        return None
    rows = [
        PaperRow(
            {"term": _label(LOGIT_LABELS, factor, level)},
            float(np.exp(fit.coef[j])),
            fit.n,
            float(np.exp(fit.ci_low[j])),
            float(np.exp(fit.ci_high[j])),
            {"coef": float(fit.coef[j]), "se": float(fit.se[j])},
        )
        for j, (factor, level) in enumerate(terms)
    ]
    note = (
        "Odds ratio of reaching the goal per term (reference: Escape, blank personas, llama3), "
        "logit on the runs whose outcome is Yes or No (failed and NotTried dropped, and "
        "Mistral/Mixtral), HC0 robust standard errors, 95% normal interval."
    )
    return PaperTable(
        "success_logit_odds_ratios",
        "Odds ratios of reaching the goal (logit)",
        "Figure 2 (right)",
        "odds_ratio",
        ["term"],
        rows,
        note,
    )


def regression_tables(conversations: Sequence[PaperConversation]) -> list[PaperTable]:
    """Every regression and correlation figure that the conversations' scores allow."""
    convs = list(conversations)
    tables = [t for f in OLS_FIGURES if (t := ols_table(convs, f)).rows]
    correlograms = [correlogram_table(convs, c) for c in CORRELOGRAMS]
    tables += [t for t in correlograms if any(r.n for r in t.rows)]
    logit_table = success_logit_table(convs)
    return tables + ([logit_table] if logit_table else [])
