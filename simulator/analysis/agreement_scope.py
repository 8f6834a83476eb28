"""Agreement between two score sources over the conversations of a scope, overall and per
group: reads conversations and their conversation-level scores batch by batch, maps each
score to the labels' vocabulary (label_sources.py) and counts (agreement.py).

When several users scored one conversation with the same source, the latest score is the
one compared (the others are counted in `duplicates`).
"""

from __future__ import annotations

from typing import Any

from simulator.analysis.agreement import Agreement, agreement_by_group
from simulator.analysis.label_sources import MEASURES, as_labels
from simulator.analysis.scope import Scope
from simulator.analysis.tables import conversation_row
from simulator.domain.clock import as_datetime
from simulator.errors import UserError

BATCH = 500
ALL = "(all)"


def model_of(row: dict, roles: list[str]) -> str:
    """The `model` factor: the roles' models, each once, in role order, joined by " + "."""
    models = [row.get(f"llm_{role}") for role in roles]
    return " + ".join(dict.fromkeys(m for m in models if m)) or "(none)"


def group_of(row: dict, by: str | None, roles: list[str]) -> str:
    if by is None:
        return ALL
    if by == "model" and "model" not in row:
        return model_of(row, roles)
    return str(row.get(by))


def factors_of(doc: dict, roles: list[str]) -> dict:
    """What `--by` groups on: an imported conversation's own factors (its cell: model, goal,
    personas, ...), a run's conversations-table row otherwise."""
    if doc.get("imported"):
        return {str(k): v for k, v in (doc.get("cell") or {}).items()}
    return conversation_row(doc, roles)


def _latest(docs: list[dict]) -> tuple[dict, int]:
    ordered = sorted(docs, key=lambda d: str(as_datetime(d.get("created_at")) or ""))
    return ordered[-1], len(docs) - 1


def sources_present(store: Any, scope: Scope) -> list[str]:
    """Scorers with conversation-level scores in the scope, sorted."""
    found: set[str] = set()
    ids = scope.conversation_ids
    for start in range(0, len(ids), BATCH):
        for doc in store.scores.for_conversations(ids[start : start + BATCH]):
            if doc.get("target_kind") == "conversation":
                found.add(doc["scorer"])
    return sorted(found)


def check_sources(store: Any, scope: Scope, sources: tuple[str, str]) -> None:
    """Exit 2 naming a source that has no conversation scores in the scope."""
    present = sources_present(store, scope)
    for source in sources:
        if source not in present:
            listed = ", ".join(present) if present else "none: score or import labels first"
            raise UserError(
                f"no conversation scores from {source!r} in {scope.kind} {scope.id}",
                field="--between",
                fix=f"name two of the sources present: {listed}",
            )


def check_factor(store: Any, scope: Scope, by: str | None) -> None:
    """Exit 2 for a --by that is not `model` or a column of the conversations table."""
    if by in (None, "model") or not scope.conversation_ids:
        return
    roles = [r["name"] for r in scope.experiment.get("roles", [])]
    row = factors_of(store.conversations.get_many(scope.conversation_ids[:1])[0], roles)
    if by not in row:
        raise UserError(
            f"{by!r} is not a factor of these conversations",
            field="--by",
            fix="use model, or one of these conversations' factors: " + ", ".join(sorted(row)),
        )


def scope_agreement(
    store: Any, scope: Scope, source_a: str, source_b: str, by: str | None = None
) -> dict:
    """{measure: {group: Agreement}} plus counts; groups sorted by name after `(all)`.
    Exit 2 when the two sources share no measure."""
    roles = [r["name"] for r in scope.experiment.get("roles", [])]
    rows: dict[str, list[tuple[str, object, object]]] = {m: [] for m in MEASURES}
    duplicates = {source_a: 0, source_b: 0}
    ids = scope.conversation_ids
    for start in range(0, len(ids), BATCH):
        docs = store.conversations.get_many(ids[start : start + BATCH])
        chunk = [d["_id"] for d in docs]
        scored: dict[tuple[str, str], list[dict]] = {}
        for source in (source_a, source_b):
            for score in store.scores.for_conversations(chunk, scorer=source):
                if score.get("target_kind") == "conversation":
                    scored.setdefault((source, score["conversation_id"]), []).append(score)
        for doc in docs:
            group = group_of(factors_of(doc, roles), by, roles)
            n_messages = (doc.get("counters") or {}).get("messages") or None
            labels = {}
            for source in (source_a, source_b):
                found = scored.get((source, doc["_id"]))
                if not found:
                    labels[source] = {}
                    continue
                score, extra = _latest(found)
                duplicates[source] += extra
                labels[source] = as_labels(source, score.get("values") or {}, n_messages)
            for measure in MEASURES:
                a, b = labels[source_a].get(measure), labels[source_b].get(measure)
                rows[measure].append((group, a, b))
    results: dict[str, dict[str, Agreement]] = {}
    for measure, measured in rows.items():
        given_a = any(a is not None for _, a, _b in measured)
        if not given_a or not any(b is not None for *_, b in measured):
            continue  # a measure only one source gives: nothing to compare

        overall = agreement_by_group((ALL, a, b) for _, a, b in measured)
        per_group = dict(sorted(agreement_by_group(measured).items())) if by else {}
        results[measure] = {**overall, **per_group}
    if not results:
        raise UserError(
            f"{source_a!r} and {source_b!r} share no label to compare (goal or third)",
            field="--between",
            fix="compare sources that both label the goal (label:..., judge:prison_goal) "
            "or both label the turn's third",
        )
    return {"results": results, "duplicates": duplicates, "conversations": len(ids)}
