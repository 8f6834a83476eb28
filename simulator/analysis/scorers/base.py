"""What every scorer is: a named plug-in that reads a conversation and returns scores.

Why a Protocol and plain tuples: scorers are written by users too (the `python:` kind), so the
contract is small and has no base class to inherit. A scorer never writes anything; the scoring
service stores what it returns beside the messages or conversations, never into the transcript.

A result whose `values` hold an `"error"` key is a failed judgement: the service reports it and
does not store it, so the next run tries that target again.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

TargetKind = Literal["message", "conversation"]
ScoreResult = tuple[str, dict[str, Any], dict[str, Any]]  # (target_id, values, details)


@runtime_checkable
class Scorer(Protocol):
    """`name` is the key in the scores collection (e.g. "judge:prison_goal").

    Conversation scorers return one result per conversation (target id = conversation id);
    message scorers receive only the messages still to score and return one result for each
    (target id = message id).
    """

    name: str
    target_kind: TargetKind

    async def score(
        self, conversation: dict, messages: list[dict], summaries: list[dict]
    ) -> list[ScoreResult]: ...


def failed(target_id: str, error: str, **details: Any) -> ScoreResult:
    """A judgement that could not be made; kept out of the store so it is retried."""
    return target_id, {"error": error}, details


def is_failed(result: ScoreResult) -> bool:
    return "error" in result[1]
