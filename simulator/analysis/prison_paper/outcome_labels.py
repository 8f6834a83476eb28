"""The outcome and factor values as the authors' scripts read them, so that every outcome
measure groups and filters the same conversations the scripts do.

`canonical_outcome` is failures_broken_down_llm.py's `canonical_goal_status`: strip, lower
case, then Yes / No / NotTried / NAN from their usual spellings ("not tried", "not_tried",
"y", "n/a", ...); anything else is kept stripped. An unlabelled conversation (None) reads as
NAN, as an empty spreadsheet cell does there (pandas reads it as NaN, written "nan"). A
conversation stored as failed is NAN whatever its label.
"""

from __future__ import annotations

from simulator.analysis.prison_paper.rows import PaperConversation

YES, NO, NOT_TRIED, FAILED = "Yes", "No", "NotTried", "NAN"
LEGIT = (YES, NO, NOT_TRIED)  # the script's "legitimate outcomes"
TRIED = (YES, NO)

_SPELLINGS = {
    YES: {"yes", "y", "true", "1"},
    NO: {"no", "n", "false", "0"},
    NOT_TRIED: {"not tried", "nottried", "not_tried", "not-tried"},
    FAILED: {"nan", "none", "na", "n/a", ""},
}


def canonical_outcome(label: object) -> str:
    """One label in the scripts' vocabulary (Yes / No / NotTried / NAN), else stripped."""
    if label is None:
        return FAILED
    text = str(label).strip()
    for canonical, spellings in _SPELLINGS.items():
        if text.lower() in spellings:
            return canonical
    return text


def outcome_of(conversation: PaperConversation) -> str:
    """The conversation's outcome; NAN for a failed one."""
    return FAILED if conversation.failed else canonical_outcome(conversation.outcome)


def factor(conversation: PaperConversation, name: str) -> str:
    """A factor's value, stripped as the scripts strip every factor column."""
    return str(conversation.factors.get(name, "")).strip()


def group_of(conversation: PaperConversation, names: tuple[str, ...]) -> dict[str, str]:
    return {name: factor(conversation, name) for name in names}


def group_key(group: dict[str, str]) -> tuple[str, ...]:
    return tuple(group.values())
