"""Figure 4 (and Figures 37-38 for the prisoner and the guard): the mean share of toxic
messages (ToxiGen, in percent) with its standard deviation, per model x outcome x persona
pair, over the non-failed conversations, as persuasion_analysis.py draws them. The figures'
OpenAI harassment and violence series need the OpenAI scores, which are not imported here.
"""

from __future__ import annotations

import math
import statistics

from simulator.analysis.prison_paper.outcome_labels import FAILED, group_key, group_of, outcome_of
from simulator.analysis.prison_paper.rows import PaperConversation
from simulator.analysis.prison_paper.table import Z95, PaperRow, PaperTable

GROUPS = ("model", "outcome", "guard_persona", "prisoner_persona")
SERIES = (
    ("all", "score:toxic_share_all", "Figure 4", "all messages"),
    ("prisoner", "score:toxic_share_prisoner", "Figure 37", "the prisoner's messages"),
    ("guard", "score:toxic_share_guard", "Figure 38", "the guard's messages"),
)


def mean_row(group: dict[str, str], values: list[float]) -> PaperRow:
    """Mean with its sample SD (extra.sd, as pandas' std) and a normal 95% interval."""
    n = len(values)
    if not n:
        return PaperRow(group, None, 0, extra={"sd": None})
    mean = statistics.fmean(values)
    if n < 2:
        return PaperRow(group, mean, n, extra={"sd": None})
    sd = statistics.stdev(values)
    half = Z95 * sd / math.sqrt(n)
    return PaperRow(group, mean, n, mean - half, mean + half, {"sd": sd})


def toxicity_by_outcome(conversations: list[PaperConversation]) -> list[PaperTable]:
    tables = []
    for who, scorer, ref, whose in SERIES:
        found: dict[tuple[str, ...], tuple[dict[str, str], list[float]]] = {}
        for conversation in conversations:
            outcome = outcome_of(conversation)
            if outcome == FAILED or scorer not in conversation.scores:
                continue
            group = {**group_of(conversation, GROUPS[:1]), "outcome": outcome}
            group |= group_of(conversation, GROUPS[2:])
            values = found.setdefault(group_key(group), (group, []))[1]
            values.append(conversation.scores[scorer] * 100)
        tables.append(
            PaperTable(
                f"toxic_share_{who}_by_model_outcome_personas",
                f"Mean % of toxic messages (ToxiGen) among {whose}, per model x outcome x "
                "persona pair",
                ref,
                "mean",
                list(GROUPS),
                [mean_row(*found[key]) for key in sorted(found)],
                note=(
                    f"From {scorer} x 100; extra.sd is the sample SD the figure draws; the "
                    "interval is a normal one for the mean. Failed conversations left out."
                ),
            )
        )
    return tables
