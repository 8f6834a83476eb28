"""Deleting an experiment or a conversation with everything that hangs on it, as the reference
tool did: conversations, messages, ledger calls, summaries, scores, sweeps, favourites, and then
the stored prompts no remaining call uses.

Children go first and the parent last, so an interrupted delete leaves the parent to delete
again. Every query carries `schema_version`: another tool's documents are never deleted.
Queries take ids in chunks (`$in`): the embedded store scans a collection for each query.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from simulator.store.counting import count as count_matching
from simulator.store.foreign import ours, plural

CHUNK = 500
_PER_CONVERSATION = (
    "messages",
    "calls",
    "summaries",
    "scores",
    "grid_steps",
    "network_rounds",
    "memories",
)


@dataclass
class Cascade:
    """What a delete removes, counted before it happens (the confirmation shows these)."""

    conversations: int = 0
    messages: int = 0
    calls: int = 0
    summaries: int = 0
    scores: int = 0
    grid_steps: int = 0
    network_rounds: int = 0
    memories: int = 0
    # the rows of the other registered worlds, by collection (a world's ROWS_COLLECTION)
    world_rows: dict[str, int] = field(default_factory=dict)
    sweeps: int = 0
    others_conversations: int = 0  # conversations among them that other users ran

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def phrase(self, include_conversations: bool = True) -> str:
        """'12 conversations (2 of them other users'), 240 messages, 300 calls and 4 scores';
        empty when nothing hangs on the target."""
        parts = []
        if include_conversations and self.conversations:
            part = plural(self.conversations, "conversation")
            if self.others_conversations:
                part += f" ({self.others_conversations} of them other users')"
            parts.append(part)
        for count, word, many in (
            (self.messages, "message", None),
            (self.calls, "call", None),
            (self.summaries, "summary", "summaries"),
            (self.scores, "score", None),
            (self.grid_steps, "grid step", None),
            (self.network_rounds, "network round row", None),
            *(
                (n, word, None)
                for collection, n in self.world_rows.items()
                if (word := _world_collections().get(collection))
            ),
            (self.memories, "memory", "memories"),
            (self.sweeps, "sweep", None),
        ):
            if count:
                parts.append(plural(count, word, many))
        if len(parts) < 2:
            return "".join(parts)
        return ", ".join(parts[:-1]) + " and " + parts[-1]


def _world_collections() -> dict[str, str]:
    """The other registered worlds' row collections, each with what one row is called
    ("market round row")."""
    from simulator.domain.world import domain_of
    from simulator.worlds import names

    found = {}
    for kind in names():
        domain = domain_of(kind)
        collection = domain.ROWS_COLLECTION
        if collection and collection not in _PER_CONVERSATION:
            found[collection] = f"{kind} {domain.ROW_UNIT} row"
    return found


def _chunks(ids: list[Any]) -> list[list[Any]]:
    return [ids[start : start + CHUNK] for start in range(0, len(ids), CHUNK)]


def _count_in(collection: Any, field: str, ids: list[Any]) -> int:
    return sum(count_matching(collection, ours({field: {"$in": c}})) for c in _chunks(ids))


def _delete_in(collection: Any, field: str, ids: list[Any]) -> None:
    for chunk in _chunks(ids):
        collection.delete_many(ours({field: {"$in": chunk}}))


def _experiment_members(db: Any, experiment_id: str) -> tuple[list[dict], list[str]]:
    conversations = list(
        db.conversations.find(ours({"experiment_id": experiment_id}), {"_id": 1, "owner": 1})
    )
    sweeps = [d["_id"] for d in db.sweeps.find(ours({"experiment_id": experiment_id}), {"_id": 1})]
    return conversations, sweeps


def _count_children(db: Any, conversation_ids: list[str], into: Cascade) -> Cascade:
    for name in _PER_CONVERSATION:
        setattr(into, name, _count_in(db[name], "conversation_id", conversation_ids))
    for name in _world_collections():
        into.world_rows[name] = _count_in(db[name], "conversation_id", conversation_ids)
    return into


def count_experiment(db: Any, experiment_id: str, owner: str) -> Cascade:
    conversations, sweeps = _experiment_members(db, experiment_id)
    counted = Cascade(
        conversations=len(conversations),
        sweeps=len(sweeps),
        others_conversations=sum(1 for d in conversations if d.get("owner") != owner),
    )
    return _count_children(db, [d["_id"] for d in conversations], counted)


def count_conversation(db: Any, conversation_id: str) -> Cascade:
    return _count_children(db, [conversation_id], Cascade(conversations=1))


def count_conversations(db: Any, conversations: list[dict], owner: str) -> Cascade:
    """A conversation with its forks ({_id, owner} each): what deleting them all removes."""
    counted = Cascade(
        conversations=len(conversations),
        others_conversations=sum(1 for d in conversations if d.get("owner") != owner),
    )
    return _count_children(db, [d["_id"] for d in conversations], counted)


def _delete_conversations(db: Any, conversation_ids: list[str]) -> set[str]:
    """Delete the conversations and what hangs on them; return the prompt hashes they used."""
    hashes: set[str] = set()
    for chunk in _chunks(conversation_ids):
        query = ours({"conversation_id": {"$in": chunk}})
        rows = db.calls.find(query, {"prompt_hash": 1})
        hashes.update(d["prompt_hash"] for d in rows if d.get("prompt_hash"))  # not an edit
    for name in (*_PER_CONVERSATION, *_world_collections()):
        _delete_in(db[name], "conversation_id", conversation_ids)
    _delete_in(db.favourites, "target", conversation_ids)
    _delete_in(db.conversations, "_id", conversation_ids)
    return hashes


def collect_prompts(db: Any, candidates: set[str]) -> int:
    """Delete the stored prompts among `candidates` that no remaining call references."""
    if not candidates:
        return 0
    hashes = sorted(candidates)
    used: set[str] = set()
    for chunk in _chunks(hashes):
        query = ours({"prompt_hash": {"$in": chunk}})
        used.update(d["prompt_hash"] for d in db.calls.find(query, {"prompt_hash": 1}))
    unused = [h for h in hashes if h not in used]
    deleted = 0
    for chunk in _chunks(unused):
        deleted += db.prompts.delete_many(ours({"_id": {"$in": chunk}})).deleted_count
    return deleted


def delete_conversation(db: Any, conversation_id: str) -> int:
    """Delete one conversation with its messages, calls, summaries and scores; return how many
    stored prompts were collected."""
    return collect_prompts(db, _delete_conversations(db, [conversation_id]))


def delete_conversations(db: Any, conversation_ids: list[str]) -> int:
    """Delete conversations (a conversation and its forks) with what hangs on them, in one
    query per collection; return how many stored prompts were collected."""
    return collect_prompts(db, _delete_conversations(db, conversation_ids))


def delete_experiment(db: Any, experiment_id: str) -> int:
    """Delete an experiment with its conversations (and what hangs on them) and its sweeps;
    return how many stored prompts were collected."""
    conversations, sweeps = _experiment_members(db, experiment_id)
    hashes = _delete_conversations(db, [d["_id"] for d in conversations])
    _delete_in(db.favourites, "target", sweeps)
    _delete_in(db.sweeps, "_id", sweeps)
    db.favourites.delete_many(ours({"target": experiment_id}))
    db.experiments.delete_one(ours({"_id": experiment_id}))
    return collect_prompts(db, hashes)
