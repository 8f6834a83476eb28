"""A scope's conversations as the paper's analysis sees them: one `PaperConversation` each.

Factors: an imported conversation's cell (model, goal, guard_persona, prisoner_persona, risks,
oversight, as the mapping names them); a run's cell flattened (its factor names as its sweep
wrote them). The outcome (Yes / No / NotTried / NAN) and the third in which the goal was
reached come from the chosen label sources (`label:adjudicated` and `label:adjudicated_turn`
for the authors' release; `judge:prison_goal` for new runs), read through label_sources.py so
that every source speaks the annotators' vocabulary. `scores` holds every per-conversation
`score:<source>` value (e.g. `score:toxic_share_prisoner`), keyed by the scorer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from simulator.analysis.label_sources import as_labels
from simulator.analysis.scope import Scope

BATCH = 500
OUTCOME_SOURCE = "label:adjudicated"
THIRD_SOURCE = "label:adjudicated_turn"


@dataclass(frozen=True)
class PaperConversation:
    id: str
    factors: dict[str, str]
    outcome: str | None  # Yes / No / NotTried / NAN as the source wrote it; None: unlabelled
    third: int | None  # 1-3 where the goal was reached, 0 when it was not; None: unknown
    failed: bool  # stored as failed (an imported NAN) or labelled NAN
    scores: dict[str, float] = field(default_factory=dict)


def _factors(doc: dict) -> dict[str, str]:
    cell = doc.get("cell") or {}
    return {str(k): str(v) for k, v in cell.items() if not isinstance(v, dict | list)}


def _latest(found: list[dict]) -> dict:
    return max(found, key=lambda d: str(d.get("created_at") or ""))


def paper_conversations(
    store: Any,
    scope: Scope,
    outcome_source: str = OUTCOME_SOURCE,
    third_source: str | None = THIRD_SOURCE,
) -> Iterator[PaperConversation]:
    """Every conversation of the scope, batch by batch, in the scope's order."""
    ids = scope.conversation_ids
    for start in range(0, len(ids), BATCH):
        docs = store.conversations.get_many(ids[start : start + BATCH])
        chunk = [d["_id"] for d in docs]
        by_conv: dict[str, dict[str, list[dict]]] = {}
        for score in store.scores.for_conversations(chunk):
            if score.get("target_kind") != "conversation":
                continue
            by_conv.setdefault(score["conversation_id"], {}).setdefault(score["scorer"], []).append(
                score
            )
        for doc in docs:
            scored = by_conv.get(doc["_id"], {})
            n_messages = (doc.get("counters") or {}).get("messages") or None
            outcome = third = None
            if scored.get(outcome_source):
                values = _latest(scored[outcome_source])["values"]
                found = as_labels(outcome_source, values, n_messages)
                outcome = found.get("goal")
                third = found.get("third")
            if third_source and scored.get(third_source):
                values = _latest(scored[third_source])["values"]
                third = as_labels(third_source, values, n_messages).get("third", third)
            scores = {
                scorer: float(_latest(found)["values"]["value"])
                for scorer, found in scored.items()
                if scorer.startswith("score:")
                and isinstance(_latest(found).get("values", {}).get("value"), int | float)
            }
            yield PaperConversation(
                doc["_id"],
                _factors(doc),
                None if outcome is None else str(outcome),
                None if third is None else int(third),
                doc.get("status") == "failed" or str(outcome).upper() == "NAN",
                scores,
            )
