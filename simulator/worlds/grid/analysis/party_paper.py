"""The party's figures as Park et al. (UIST 2023, section 7) report theirs, and their numbers.

Two simulated days of 25 agents in Smallville: the Valentine's party known by 1 agent at the
start and 13 (52%) at the end (the mayoral candidacy: 1 -> 8); relationship density 0.167 ->
0.74; 6 of 453 interview answers hallucinated (1.3%); of the 12 agents invited, 5 came. A run
here reads the same quantities from its probe (analysis/grid/party.py): `paper_summary` gives
them as scalar measures (SUMMARY in measures.py), `PAPER_ROWS` pairs each with the paper's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperRow:
    """One line of the comparison: what is measured, the paper's figure, and the measure
    (with the one it is a share of, when the figure reads "k of n")."""

    quantity: str
    paper: str
    measure: str
    out_of: str | None = None  # the measure giving the n of "k of n"


PAPER_AGENTS = 25
PAPER_ROWS = (
    PaperRow("agents who knew of the party at the start", "1 of 25 (4%)", "news_known_at_start"),
    PaperRow("agents who knew of the party at the end", "13 of 25 (52%)", "news_known"),
    PaperRow("relationship density at the start", "0.167", "relationship_density_at_start"),
    PaperRow("relationship density at the end", "0.74", "relationship_density"),
    PaperRow(
        "interview answers hallucinated",
        "6 of 453 (1.3%)",
        "hallucinated_answers",
        "interview_answers",
    ),
    PaperRow("agents invited (heard of it before it began)", "12", "invited"),
    PaperRow("invited agents who attended", "5 of 12", "invited_attended", "invited"),
)
PAPER_NOTE = (
    "Park et al. (2023), section 7: two simulated days, 25 agents; a second piece of news, "
    "the mayoral candidacy, went from 1 to 8 agents (32%)."
)


def _count(values: list | None) -> int | None:
    return None if values is None else len(values)


def paper_summary(party: dict | None) -> dict:
    """The paper's quantities as scalars (None where the run's probe did not ask for them)."""
    party = party or {}
    news = party.get("news") or {}
    asked = bool(news.get("asked"))
    n = len(news.get("per_agent") or [])
    rel = party.get("relationships") or {}
    lies = party.get("hallucination") or {}
    att = party.get("attendance") or {}
    return {
        "news_known_at_start": news.get("knew_at_start") if news else None,
        "news_known_at_start_share": news["knew_at_start"] / n if news and n else None,
        "news_known": news.get("knows") if asked else None,
        "relationship_density_at_start": rel.get("start_density"),
        "interview_answers": lies.get("answers"),
        "hallucinated_answers": lies.get("unbacked_yes"),
        "hallucinated_answer_share": lies.get("share"),
        "invited": _count(att.get("invited")),
        "invited_attended": _count(att.get("invited_attended")),
    }
