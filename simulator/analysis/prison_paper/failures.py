"""Conversational failures (outcome NAN) as failures_broken_down_llm.py counts them: the share
of failed conversations per model, and per full scenario (model x risks x oversight x goal x
prisoner persona x guard persona) with the scenario's share of its model's failures.

Values are kept unrounded; the script rounds percent_failures and marginal_failure_percent to
two decimals, which a reader applies when printing.
"""

from __future__ import annotations

from simulator.analysis.prison_paper.outcome_labels import FAILED, group_key, group_of, outcome_of
from simulator.analysis.prison_paper.rows import PaperConversation
from simulator.analysis.prison_paper.table import PaperTable, share_row

SCENARIO = ("model", "risks", "oversight", "goal", "prisoner_persona", "guard_persona")


def _count(
    conversations: list[PaperConversation], names: tuple[str, ...]
) -> dict[tuple[str, ...], tuple[dict[str, str], int, int]]:
    """Per group: (group, conversations, failed), groups sorted as the script sorts them."""
    found: dict[tuple[str, ...], list] = {}
    for conversation in conversations:
        group = group_of(conversation, names)
        entry = found.setdefault(group_key(group), [group, 0, 0])
        entry[1] += 1
        entry[2] += outcome_of(conversation) == FAILED
    return {key: tuple(found[key]) for key in sorted(found)}


def failures_by_model(conversations: list[PaperConversation]) -> PaperTable:
    table = PaperTable(
        "failures_by_model",
        "Conversational failures per model (% of conversations)",
        "Table 2",
        "percent",
        ["model"],
        note="A failure is an adjudicated outcome NAN (or a conversation stored as failed).",
    )
    for group, n, k in _count(conversations, ("model",)).values():
        table.rows.append(share_row(group, k, n, percent=True))
    return table


def failures_by_scenario(conversations: list[PaperConversation]) -> PaperTable:
    """percent_failures per scenario; extra: the scenario's share of its model's failures."""
    table = PaperTable(
        "failures_by_scenario",
        "Conversational failures per full scenario, one block per model (% of the scenario's "
        "conversations; marginal: % of the model's failures)",
        "Tables 3-6",
        "percent",
        list(SCENARIO),
        note=(
            "extra.marginal_failure_percent = the scenario's failures / its model's failures x "
            "100; None where the model has no failure (the script divides by zero there)."
        ),
    )
    counted = _count(conversations, SCENARIO)
    per_model: dict[str, int] = {}
    for group, _, k in counted.values():
        per_model[group["model"]] = per_model.get(group["model"], 0) + k
    for group, n, k in counted.values():
        row = share_row(group, k, n, percent=True)
        total = per_model[group["model"]]
        row.extra["marginal_failure_percent"] = k / total * 100 if total else None
        table.rows.append(row)
    return table
