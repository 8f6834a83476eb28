"""What an analysis covers: an experiment, a sweep or one conversation, named by its id.

Exports, measures and the report all start from a Scope so they agree on which conversations
belong together and which experiment content (roles, sections) describes them.

A conversation with forks (domain/fork.py) is analysed with its family: the conversation, then
each of its forks followed by that fork's own forks, oldest first. An experiment or a sweep
holds its forks like any of its conversations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator.domain.clock import as_datetime
from simulator.domain.fork import MAX_FORK_DEPTH
from simulator.errors import NotFound, UserError
from simulator.store.foreign import foreign_refusal
from simulator.store.repositories.experiments import to_model

KINDS = ("experiment", "sweep", "conversation")


@dataclass
class Scope:
    kind: str  # "experiment" | "sweep" | "conversation"
    id: str
    experiment_id: str
    experiment: dict  # experiment content (model dump): names roles and sections
    sweep: dict | None
    conversation_ids: list[str] = field(default_factory=list)


def resolve_scope(store: Any, target_id: str) -> Scope:
    """Look an id up by its prefix; NotFound (exit 2, with a fix) when it names nothing."""
    target = target_id.strip()
    if target.startswith("sweep_"):
        return _sweep_scope(store, target)
    if target.startswith("conv_"):
        return _conversation_scope(store, target)
    if target.startswith("exp_"):
        return _experiment_scope(store, target)
    for kind in ("experiment", "conversation"):  # the reference tool's ids: say whose they are
        if target and store.is_foreign(kind, target):
            message, fix = foreign_refusal(kind, target, store.import_command)
            raise NotFound(message, field="ID", fix=fix)
    raise UserError(
        f"{target_id!r} is not an experiment, sweep or conversation id",
        field="ID",
        fix="give an id starting with exp_, sweep_ or conv_ "
        "(see 'llm-sim experiment list', 'llm-sim conversation list')",
    )


def _sweep_scope(store: Any, sweep_id: str) -> Scope:
    sweep = store.sweeps.get(sweep_id)
    ids = store.sweeps.conversation_ids(sweep_id)  # ids only: documents are read per batch
    return Scope("sweep", sweep_id, sweep["experiment_id"], sweep["experiment"], sweep, ids)


def _conversation_scope(store: Any, conversation_id: str) -> Scope:
    doc = store.conversations.get(conversation_id)
    sweep = store.sweeps.get(doc["sweep_id"]) if doc.get("sweep_id") else None
    experiment = doc.get("experiment") or (sweep or {}).get("experiment")
    if experiment is None:  # no snapshot: fall back to the experiment as stored now
        experiment = _experiment_content(store.experiments.get(doc["experiment_id"]))
    ids = family(store, conversation_id, doc["experiment_id"])
    return Scope("conversation", conversation_id, doc["experiment_id"], experiment, sweep, ids)


def family(store: Any, conversation_id: str, experiment_id: str | None = None) -> list[str]:
    """The conversation and every fork below it, depth first: a branch, then its branches
    (one query for the experiment's fork links, the tree built in memory; `[conversation_id]`
    without forks)."""
    if experiment_id is None:
        experiment_id = store.conversations.get(conversation_id)["experiment_id"]
    children: dict[str, list[dict]] = {}
    for link in store.conversations.fork_links(experiment_id):
        children.setdefault(link["fork_of"], []).append(link)
    ids: dict[str, None] = {}
    stack: list[tuple[str, int]] = [(conversation_id, 0)]
    while stack:
        current, depth = stack.pop()
        if current in ids or depth > MAX_FORK_DEPTH:  # a loop in a damaged store
            continue
        ids[current] = None
        below = sorted(children.get(current, []), key=sibling_order)
        stack.extend((child["_id"], depth + 1) for child in reversed(below))
    return list(ids)


def sibling_order(doc: dict) -> tuple:
    """Forks of one parent, oldest first; the repetitions of one fork command, stored within
    the same millisecond, by their number."""
    created = as_datetime(doc.get("created_at"))
    return (str(created or ""), doc.get("fork_repetition") or 0, doc["_id"])


def _experiment_scope(store: Any, experiment_id: str) -> Scope:
    doc = store.experiments.get(experiment_id)
    ids = store.conversations.ids(experiment_id)[::-1]  # oldest first, like a sweep's order
    return Scope("experiment", experiment_id, experiment_id, _experiment_content(doc), None, ids)


def _experiment_content(doc: dict) -> dict:
    return to_model(doc).model_dump(mode="json")
