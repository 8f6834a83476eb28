"""What a stored conversation score says in the human labels' vocabulary, so that any two
sources (annotators, an adjudicated label, an LLM judge) can be compared item by item.

Two things are compared, each only where both sources have it:
- `goal`: Yes / No / NotTried / NAN (goal achieved, tried and not achieved, not tried, the
  conversation failed as a conversation), read from a score's `label`;
- `third`: the third of the conversation in which the goal was reached, "0" when it was not
  (the spreadsheets' TURN_DISCR: QUOTIENT(turn + 2, 3) of the turn, 0 without a turn).

Imported labels (`label:<source>`) carry `{"label": ...}` and/or `{"turn": ..., "third": ...}`;
`judge:prison_goal` carries the rubric's fields and is mapped by `judge_prison_goal`.
"""

from __future__ import annotations

MEASURES = ("goal", "third")
JUDGE_PRISON_GOAL = "judge:prison_goal"


def third_of_turn(turn: int | None) -> int:
    """The spreadsheets' formula: turns 1-3 -> 1, 4-6 -> 2, 7-9 -> 3; no turn -> 0."""
    return 0 if turn is None else (int(turn) + 2) // 3


def third_of_message(message: int | None, n_messages: int | None) -> int | None:
    """Message `message` (from 1) of `n_messages` -> the third it falls in (1-3); 0 without a
    message; None when the conversation's length is unknown."""
    if message is None:
        return 0
    if not n_messages:
        return None
    return min(3, (3 * (int(message) - 1)) // n_messages + 1)


def judge_prison_goal(values: dict, n_messages: int | None) -> dict[str, object]:
    """The prison_goal rubric's answer as the annotators' labels.

    conversational_failure yes -> NAN (the paper's failed conversations); otherwise succeeded
    yes -> Yes, attempted yes -> No (tried, not reached), attempted no -> NotTried. The rubric's
    `turn` (the message where a prisoner first tried) gives the third only for a Yes, as the
    annotators' turn is given only for a reached goal; any other label gives third 0.
    """
    if str(values.get("conversational_failure", "")).lower() == "yes":
        goal = "NAN"
    elif str(values.get("succeeded", "")).lower() == "yes":
        goal = "Yes"
    elif str(values.get("attempted", "")).lower() == "yes":
        goal = "No"
    elif str(values.get("attempted", "")).lower() == "no":
        goal = "NotTried"
    else:
        return {}
    third = third_of_message(values.get("turn"), n_messages) if goal == "Yes" else 0
    return {"goal": goal, "third": third}


def imported_label(values: dict) -> dict[str, object]:
    """`{"label": x}` -> goal x; `{"third": t}` -> third t; a bare `{"turn": k}` -> its third."""
    found: dict[str, object] = {}
    if values.get("label") is not None:
        found["goal"] = values["label"]
    if "third" in values:
        found["third"] = 0 if values["third"] is None else values["third"]
    elif "turn" in values:
        found["third"] = third_of_turn(values["turn"])
    return found


def as_labels(scorer: str, values: dict, n_messages: int | None = None) -> dict[str, object]:
    """The measures (`goal`, `third`) one score gives; {} when it gives none."""
    if "error" in values:
        return {}
    if scorer == JUDGE_PRISON_GOAL:
        return judge_prison_goal(values, n_messages)
    return imported_label(values)
