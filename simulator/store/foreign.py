"""Documents this tool did not write, kept apart from the ones it did.

The reference LLM Interaction Simulator writes `experiments`, `conversations` and `messages`
into collections of the same names (ObjectId `_id`s, no `schema_version`). This tool reads,
indexes, migrates and deletes only its own documents: every one it writes carries
`schema_version`, so that field is the mark. Foreign documents are counted (to tell the user
how many were left out and how to import them) and never changed.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from bson import ObjectId

from simulator.store.conversation_questions import foreign_count
from simulator.store.conversation_rows import installed
from simulator.store.counting import count
from simulator.store.embedded import OURS_FIELD, by_ids, count_ours, table_of

OURS: dict = {"schema_version": {"$exists": True}}
NOT_OURS: dict = {"schema_version": {"$exists": False}}
# the collections the reference tool writes into, in the order a message names them
REFERENCE_COLLECTIONS = ("experiments", "conversations", "messages")
REFERENCE_TOOL = "the reference LLM Interaction Simulator"
DEFAULT_IMPORT = "llm-sim import reference --from <this database>"
_OBJECT_ID = re.compile(r"^[0-9a-fA-F]{24}$")


def ours(query: dict | None = None) -> dict:
    """`query` restricted to documents this tool wrote."""
    return {**(query or {}), **OURS}


def foreign_counts(db: Any, collections: tuple[str, ...] = REFERENCE_COLLECTIONS) -> dict[str, int]:
    """How many documents of each reference collection this tool did not write."""
    return {name: _foreign_count(db[name]) for name in collections}


def _foreign_count(collection: Any) -> int:
    table = table_of(collection)
    if table is None:
        return count(collection, NOT_OURS)
    return table_foreign_count(table)


def table_foreign_count(table: Any) -> int:
    """How many documents of an embedded store's table this tool did not write."""
    if installed(table):  # the conversations' rows (conversation_rows.py) know
        return foreign_count(table)
    return count_ours(table)[1]


def is_foreign_id(collection: Any, typed_id: str) -> bool:
    """Whether the id a user typed names another tool's document here (an ObjectId's hex, as
    the reference tool showed it, or a string id without `schema_version`)."""
    candidates: list[Any] = [typed_id]
    if _OBJECT_ID.match(typed_id):
        candidates.append(ObjectId(typed_id))
    table = table_of(collection)
    if table is not None:  # by primary key: a query would index the whole collection
        return any(OURS_FIELD not in doc for doc in by_ids(table, candidates))
    found = collection.find_one({"_id": {"$in": candidates}, **NOT_OURS}, {"_id": 1})
    return found is not None


def import_command(location: str, db_name: str) -> str:
    """The command that imports the reference tool's documents of this database."""
    return f"llm-sim import reference --from {shlex.quote(location)} --db-name {db_name}"


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    return f"{count} {singular if count == 1 else plural_form or singular + 's'}"


def left_out_note(counts: dict[str, int], command: str) -> str | None:
    """'3 experiments and 12 conversations from the reference tool were left out; import them
    with: …', or None when there is nothing foreign."""
    parts = [
        plural(counts.get(name, 0), name[:-1])
        for name in ("experiments", "conversations")
        if counts.get(name, 0)
    ]
    if not parts:
        return None
    return f"{' and '.join(parts)} from {REFERENCE_TOOL} were left out; import them with: {command}"


def foreign_refusal(kind: str, typed_id: str, command: str) -> tuple[str, str]:
    """Message and fix for an id that names another tool's document."""
    return (
        f"{kind} {typed_id!r} was written by another tool ({REFERENCE_TOOL}); this tool only "
        "reads its own documents and never changes that one",
        f"import it with: {command}",
    )
