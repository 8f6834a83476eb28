"""A fork's shared prefix: the messages and day summaries (a chat's) or the step and round rows
(a grid's, a network's) it reads from its ancestors.

A fork stores only what it wrote (from its fork point on); what comes before is read here,
from its parent, and from the parent's parent when the parent is itself a fork, so each
message (row) is stored once however many branches share it (domain/fork.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator.domain.fork import MAX_FORK_DEPTH, ForkPoint, StepPoint
from simulator.domain.world import domain_of
from simulator.worlds import kind_of


@dataclass
class Prefix:
    """What a conversation shares with its ancestors, in order: each message carries
    `conversation_id`, the ancestor that stored it."""

    messages: list[dict] = field(default_factory=list)
    summaries: list[dict] = field(default_factory=list)  # days wholly before the fork point
    # a grid or network fork's: the step (round) rows before its fork point, each carrying
    # `conversation_id`, the ancestor that stored it
    rows: list[dict] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.messages and not self.summaries and not self.rows


def fork_point(doc: dict) -> ForkPoint | None:
    """Where a chat branched from its parent, or None for a conversation that is not a fork
    (a grid's or network's fork point is a step or a round: `step_point`)."""
    at = doc.get("fork_at")
    return ForkPoint.of(at) if doc.get("fork_of") and at and "day" in at else None


def prefix(store: Any, doc: dict) -> Prefix:
    """The messages and summaries `doc` shares with its ancestors (empty when not a fork)."""
    point = fork_point(doc)
    if point is None:
        return Prefix()
    return _before(store, store.conversations.get(doc["fork_of"]), point, depth=1)


def _before(store: Any, doc: dict, limit: ForkPoint, depth: int) -> Prefix:
    """`doc`'s transcript (its own prefix included) before `limit`."""
    if depth > MAX_FORK_DEPTH:
        raise RuntimeError(f"{doc['_id']}: forks nest deeper than {MAX_FORK_DEPTH}; a loop?")
    own_start = fork_point(doc)
    inherited = Prefix()
    if own_start is not None:
        upto = min(limit, own_start)
        inherited = _before(store, store.conversations.get(doc["fork_of"]), upto, depth + 1)
    messages = [
        m for m in store.messages.for_conversation(doc["_id"]) if limit.holds(m["day"], m["index"])
    ]
    # a day's summary is shared when the whole day is: every day before the limit's day
    summaries = [s for s in store.conversations.summaries(doc["_id"]) if s["day"] < limit.day]
    return Prefix(inherited.messages + messages, inherited.summaries + summaries)


def full_transcript(store: Any, doc: dict) -> tuple[list[dict], list[dict]]:
    """(messages, summaries) of a conversation, its shared prefix first."""
    shared = prefix(store, doc)
    own = store.messages.for_conversation(doc["_id"])
    summaries = store.conversations.summaries(doc["_id"])
    return shared.messages + own, shared.summaries + summaries


def children(store: Any, conversation_id: str) -> list[dict]:
    """The conversations forked from this one (not their forks), oldest first."""
    return store.conversations.forks_of(conversation_id)


def rows_collection(doc: dict) -> str:
    """The store collection of a run's rows (its world's domain part says which)."""
    collection = domain_of(kind_of(doc)).ROWS_COLLECTION
    if collection is None:
        raise ValueError(f"{doc['_id']} stores messages, not rows: read its full_transcript")
    return collection


def step_point(doc: dict) -> StepPoint | None:
    """Where a grid or network run branched from its parent (the first step or round it
    stores), or None for a run that is not a fork."""
    at = doc.get("fork_at")
    return StepPoint.of(at) if doc.get("fork_of") and at and "day" not in at else None


def world_prefix(store: Any, doc: dict) -> Prefix:
    """The rows a grid or network fork shares with its ancestors (empty when not a fork)."""
    point = step_point(doc)
    if point is None:
        return Prefix()
    collection = rows_collection(doc)
    parent = store.conversations.get(doc["fork_of"])
    return Prefix(rows=_rows_before(store, parent, collection, point, depth=1))


def _rows_before(store: Any, doc: dict, collection: str, limit: StepPoint, depth: int) -> list:
    """`doc`'s rows (its own prefix included) of the steps (rounds) before `limit`."""
    if depth > MAX_FORK_DEPTH:
        raise RuntimeError(f"{doc['_id']}: forks nest deeper than {MAX_FORK_DEPTH}; a loop?")
    own_start = step_point(doc)
    inherited: list[dict] = []
    if own_start is not None:
        upto = min(limit, own_start)
        parent = store.conversations.get(doc["fork_of"])
        inherited = _rows_before(store, parent, collection, upto, depth + 1)
    rows = store.rows(collection).for_run(doc["_id"])
    return inherited + [r for r in rows if limit.holds(r[limit.unit])]


def full_rows(store: Any, doc: dict) -> list[dict]:
    """A grid's step rows or a network's round rows, a fork's shared ones first."""
    collection = rows_collection(doc)
    return world_prefix(store, doc).rows + store.rows(collection).for_run(doc["_id"])
