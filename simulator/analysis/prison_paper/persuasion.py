"""Persuasion as persuasion_analysis.py and failures_broken_down_llm.py compute it, over the
conversations with a legitimate outcome (Yes / No / NotTried; failed ones left out):
- attempt rate P(attempt) = (Yes + No) / (Yes + No + NotTried), and success among attempts
  P(success | attempt) = Yes / (Yes + No), per grouping (Table 8: model x goal; Tables 9-12:
  model x goal x prisoner persona x guard persona; and pooled by one factor);
- Table 13: success among attempts under the lenient definition (the adjudicated label) and
  the strict one (the authors' GOAL_STRICT labels, given by conversation id when available);
- Figure 2 (left): the outcome distribution per model x goal, and the third of the
  conversation in which the goal was reached, among the conversations that reached it.
"""

from __future__ import annotations

from simulator.analysis.prison_paper.outcome_labels import (
    FAILED,
    LEGIT,
    TRIED,
    YES,
    group_key,
    group_of,
    outcome_of,
)
from simulator.analysis.prison_paper.rows import PaperConversation
from simulator.analysis.prison_paper.table import PaperTable, share_row

MODEL_GOAL = ("model", "goal")
PERSONAS = ("model", "goal", "prisoner_persona", "guard_persona")
THIRDS = (1, 2, 3)
NO_ATTEMPT_NOTE = (
    "A group without attempts has no success share (value None); the script prints 0 there."
)


def _legit(conversations: list[PaperConversation]) -> list[tuple[PaperConversation, str]]:
    found = [(c, outcome_of(c)) for c in conversations]
    return [(c, outcome) for c, outcome in found if outcome in LEGIT]


def _tally(
    conversations: list[PaperConversation], names: tuple[str, ...]
) -> list[tuple[dict[str, str], int, int, int]]:
    """Per group with a legitimate outcome: (group, total, attempts, successes), sorted."""
    found: dict[tuple[str, ...], list] = {}
    for conversation, outcome in _legit(conversations):
        group = group_of(conversation, names)
        entry = found.setdefault(group_key(group), [group, 0, 0, 0])
        entry[1] += 1
        entry[2] += outcome in TRIED
        entry[3] += outcome == YES
    return [tuple(found[key]) for key in sorted(found)]


def persuasion_tables(
    conversations: list[PaperConversation], names: tuple[str, ...], suffix: str, ref: str
) -> list[PaperTable]:
    """P(attempt) and P(success | attempt), in percent, for one grouping."""
    by = " x ".join(name.replace("_", " ") for name in names)
    attempts = PaperTable(
        f"persuasion_attempts_by_{suffix}",
        f"P(attempt): Yes or No among legitimate outcomes, by {by} (%)",
        ref,
        "percent",
        list(names),
        note="Legitimate outcomes: Yes, No, NotTried; failed conversations are left out.",
    )
    success = PaperTable(
        f"persuasion_success_by_{suffix}",
        f"P(success | attempt): Yes among Yes or No, by {by} (%)",
        ref,
        "percent",
        list(names),
        note=NO_ATTEMPT_NOTE,
    )
    for group, total, tried, won in _tally(conversations, names):
        attempts.rows.append(share_row(group, tried, total, percent=True))
        success.rows.append(share_row(dict(group), won, tried, percent=True))
    return [attempts, success]


def strict_table(
    conversations: list[PaperConversation], strict: dict[str, str] | None = None
) -> PaperTable:
    """Table 13: success among attempts, lenient vs strict, per model x goal with attempts."""
    table = PaperTable(
        "persuasion_strict_by_model_goal",
        "Goal achieved among attempts: lenient (adjudicated label) and strict definitions (%)",
        "Table 13",
        "percent",
        [*MODEL_GOAL, "definition"],
        note=(
            "lenient: the adjudicated goal_achieved (the label every other table uses); strict: "
            "GOAL_STRICT, counted as the script counts it, among every conversation with a "
            "legitimate outcome (so a NotTried one may count), over the same attempts. "
            "extra.delta = lenient successes - strict ones."
        ),
    )
    if strict is None:
        table.note += (
            " The strict labels (the *-strict.xlsx workbooks) are not part of the release: "
            "strict rows have no value."
        )
    strict_yes: dict[tuple[str, ...], int] = {}
    for conversation, _ in _legit(conversations):
        label = (strict or {}).get(conversation.id)
        if str(label).strip().lower() == "yes":
            key = group_key(group_of(conversation, MODEL_GOAL))
            strict_yes[key] = strict_yes.get(key, 0) + 1
    for group, _, tried, won in _tally(conversations, MODEL_GOAL):
        if not tried:
            continue  # the script's table starts from the groups with attempts
        table.rows.append(share_row({**group, "definition": "lenient"}, won, tried, percent=True))
        if strict is None:
            row = share_row({**group, "definition": "strict"}, 0, 0, percent=True)
            row.n, row.extra = tried, {"k": None, "delta": None}
        else:
            k = strict_yes.get(group_key(group), 0)
            row = share_row({**group, "definition": "strict"}, k, tried, percent=True)
            row.extra["delta"] = won - k
        table.rows.append(row)
    return table


def outcome_distribution(conversations: list[PaperConversation]) -> PaperTable:
    """Figure 2 (left, top): each outcome's share of the model x goal's non-failed runs."""
    table = PaperTable(
        "outcome_distribution_by_model_goal",
        "Outcome distribution per model x goal (% of non-failed conversations)",
        "Figure 2 (left, top)",
        "percent",
        [*MODEL_GOAL, "outcome"],
        note=(
            "Every legitimate outcome has a row, 0 included. The script draws only the outcomes "
            "found; where a goal lacks one, its bar takes the other goal's value (one value "
            "broadcast over both positions)."
        ),
    )
    found: dict[tuple[str, ...], tuple[dict[str, str], dict[str, int]]] = {}
    for conversation in conversations:
        outcome = outcome_of(conversation)
        if outcome == FAILED:
            continue
        group = group_of(conversation, MODEL_GOAL)
        counts = found.setdefault(group_key(group), (group, {}))[1]
        counts[outcome] = counts.get(outcome, 0) + 1
    for key in sorted(found):
        group, counts = found[key]
        n = sum(counts.values())
        for outcome in [*LEGIT, *sorted(set(counts) - set(LEGIT))]:
            k = counts.get(outcome, 0)
            table.rows.append(share_row({**group, "outcome": outcome}, k, n, percent=True))
    return table


def success_thirds(conversations: list[PaperConversation]) -> PaperTable:
    """Figure 2 (left, bottom): in which third the goal was reached, per model x goal."""
    table = PaperTable(
        "success_third_by_model_goal",
        "Third of the conversation in which the goal was reached, per model x goal "
        "(% of the non-failed conversations with a third)",
        "Figure 2 (left, bottom)",
        "percent",
        [*MODEL_GOAL, "third"],
        note="Conversations with third 1-3 (0: goal not reached; unknown: left out).",
    )
    found: dict[tuple[str, ...], tuple[dict[str, str], dict[int, int]]] = {}
    for conversation in conversations:
        if outcome_of(conversation) == FAILED or conversation.third not in THIRDS:
            continue
        group = group_of(conversation, MODEL_GOAL)
        counts = found.setdefault(group_key(group), (group, {}))[1]
        counts[conversation.third] = counts.get(conversation.third, 0) + 1
    for key in sorted(found):
        group, counts = found[key]
        n = sum(counts.values())
        for third in THIRDS:
            k = counts.get(third, 0)
            table.rows.append(share_row({**group, "third": str(third)}, k, n, percent=True))
    return table
