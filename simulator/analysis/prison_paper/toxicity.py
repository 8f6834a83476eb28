"""The paper's toxicity and moderation bar charts, as its scripts compute them.

The authors' scripts (analysis_toxigen_toxicity.py, analysis_openai_harassment.py,
analysis_openai_violence.py) draw, for each source and each statistic, one bar chart: a panel
per goal and persona pair (prisoner, guard), a group of bars per model, one bar per role (all
messages, the prisoner's, the guard's). A bar is the mean over that cell's conversations of a
per-conversation number: the share of the role's messages the classifier scored above 0.5, or
its mean score. Failed conversations (adjudicated NAN) are dropped first, as are Mistral and
Mixtral. The scripts draw the standard deviation as the error bar; a row here carries that in
`extra["sd"]` and the 95% t interval of the mean in `ci_low` / `ci_high`, clipped to [0, 1]
(every share and every classifier score lies there; a skewed cell's t interval can cross 0).

Scores are read from `PaperConversation.scores` under the names the shipped mapping gives
them (`score:toxic_share_guard`, `score:harassment_prisoner`, ...); a conversation without a
bar's score does not count in that bar (pandas' mean skips a missing value the same way).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from simulator.analysis.measures import mean_ci
from simulator.analysis.prison_paper.rows import PaperConversation
from simulator.analysis.prison_paper.table import PaperRow, PaperTable

DROPPED_MODELS = ("mistral:latest", "mixtral:latest")
ROLES = ("all", "prisoner", "guard")
GROUP_BY = ["goal", "prisoner_persona", "guard_persona", "model", "role"]
# The scripts' panel and bar order (their categorical orders); unknown values follow, sorted.
ORDER = {
    "goal": ("Yard Time", "Escape"),
    "prisoner_persona": ("Blank Personalities", "Good Prisoner", "Bad Prisoner"),
    "guard_persona": ("Blank Personalities", "Good Guard", "Bad Guard"),
    "model": ("llama3:latest", "command-r:latest", "orca2:latest", "gpt-4.1-2025-04-14"),
    "role": ROLES,
}


@dataclass(frozen=True)
class BarChart:
    """One of the scripts' bar charts: which scores it plots and where the paper shows it."""

    key: str
    title: str
    paper_ref: str
    prefix: str  # score name before the role: "toxic_share" -> score:toxic_share_guard


BAR_CHARTS = (
    BarChart(
        "toxigen_share_by_cell",
        "Share of toxic messages (ToxiGen), by goal, personas, model and role",
        "Figures 5-8 (toxygen_barcharts_percentages.pdf)",
        "toxic_share",
    ),
    BarChart(
        "toxigen_score_by_cell",
        "Mean toxicity score (ToxiGen), by goal, personas, model and role",
        "Figures 5-8 (toxygen_barcharts_score.pdf)",
        "toxic",
    ),
    BarChart(
        "harassment_share_by_cell",
        "Share of harassment messages (OpenAI moderation), by goal, personas, model and role",
        "Figures 11-15 (openai_harassment_barcharts_percentages.pdf)",
        "harassment_share",
    ),
    BarChart(
        "harassment_score_by_cell",
        "Mean harassment score (OpenAI moderation), by goal, personas, model and role",
        "Figures 11-15 (openai_harassment_barcharts_scores.pdf)",
        "harassment",
    ),
    BarChart(
        "violence_share_by_cell",
        "Share of violence messages (OpenAI moderation), by goal, personas, model and role",
        "Figures 18-22 (openai_violence_barcharts_percentages.pdf)",
        "violence_share",
    ),
    BarChart(
        "violence_score_by_cell",
        "Mean violence score (OpenAI moderation), by goal, personas, model and role",
        "Figures 18-22 (openai_violence_barcharts_scores.pdf)",
        "violence",
    ),
)

NOTE = (
    "Mean over the cell's conversations, failed ones (adjudicated NAN) left out; 95% t "
    "interval; extra.sd is the standard deviation the paper draws as the error bar. The paper "
    "names the personas Peaceful / Rebellious Prisoner, Respectful / Abusive Guard and Blank "
    "Personality."
)


def analysed(conversations: Iterable[PaperConversation]) -> list[PaperConversation]:
    """The conversations the scripts keep: not failed, not from a dropped model."""
    return [
        c for c in conversations if not c.failed and c.factors.get("model") not in DROPPED_MODELS
    ]


def _rank(factor: str, value: str) -> tuple[int, str]:
    known = ORDER.get(factor, ())
    return (known.index(value), "") if value in known else (len(known), value)


def _sd(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def bar_chart(conversations: Iterable[PaperConversation], chart: BarChart) -> PaperTable:
    """One chart's bars: a row per goal, prisoner persona, guard persona, model and role that
    has at least one conversation with the role's score."""
    cells: dict[tuple[str, ...], list[float]] = {}
    for conv in analysed(conversations):
        cell = tuple(conv.factors.get(f, "") for f in GROUP_BY[:-1])
        for role in ROLES:
            value = conv.scores.get(f"score:{chart.prefix}_{role}")
            if value is not None and not math.isnan(value):
                cells.setdefault((*cell, role), []).append(value)
    table = PaperTable(chart.key, chart.title, chart.paper_ref, "mean", list(GROUP_BY), note=NOTE)
    for key in sorted(cells, key=lambda k: [_rank(f, v) for f, v in zip(GROUP_BY, k, strict=True)]):
        values = cells[key]
        mean, low, high = mean_ci(values)
        table.rows.append(
            PaperRow(
                dict(zip(GROUP_BY, key, strict=True)),
                mean,
                len(values),
                None if low is None else max(0.0, low),
                None if high is None else min(1.0, high),
                {"sd": _sd(values)},
            )
        )
    return table


def toxicity_tables(conversations: Iterable[PaperConversation]) -> list[PaperTable]:
    """Every toxicity and moderation bar chart of the paper, in the scripts' order."""
    kept = analysed(conversations)
    return [bar_chart(kept, chart) for chart in BAR_CHARTS]
