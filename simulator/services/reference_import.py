"""Import a reference-tool database: read it (only `find`), convert everything, then write.

`plan` reads the source and converts every document without writing anything (that is the
dry run); `apply` writes what the plan found new through the repositories, so the imported
experiments and conversations look native. A failure while writing removes what this run wrote.
Ids come from the source ObjectIds, so a second import finds everything present.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.domain import reference_conversion as rc
from simulator.errors import NotFound, UserError
from simulator.identity import check_user_name
from simulator.settings import redact_uri
from simulator.store import database
from simulator.store.database import Connection, classify_uri, open_database
from simulator.store.reference_source import ReferenceSource
from simulator.store.repositories.experiments import imported_document
from simulator.store.store import Store

DEFAULT_SOURCE_DB = "final_experiments"  # the paper's setup
ROWS = ("experiments", "conversations", "messages")


@dataclass
class Tally:
    found: int = 0
    imported: int = 0  # in a dry run: would be imported
    present: int = 0
    skipped: int = 0


@dataclass
class Skipped:
    kind: str  # "experiment" | "conversation"
    source_id: str
    reason: str


@dataclass
class ImportPlan:
    """Everything the source holds, converted, and what the target already has."""

    source: str  # safe to show: credentials redacted
    db_name: str
    experiments: list[rc.ExperimentImport] = field(default_factory=list)
    conversations: list[rc.ConversationImport] = field(default_factory=list)
    present: set[str] = field(default_factory=set)  # our ids already in the target
    skipped: list[Skipped] = field(default_factory=list)
    tallies: dict[str, Tally] = field(default_factory=lambda: {r: Tally() for r in ROWS})
    stray_messages: int = 0  # reference messages no conversation names

    @property
    def new_experiments(self) -> list[rc.ExperimentImport]:
        return [e for e in self.experiments if e.id not in self.present]

    @property
    def new_conversations(self) -> list[rc.ConversationImport]:
        return [c for c in self.conversations if c.id not in self.present]

    def notes(self) -> list[str]:
        """What the conversion did, once per kind of change, for the summary."""
        found: list[str] = []
        experiments, new = self.new_experiments, self.new_conversations
        for item in [*experiments, *new]:
            found.extend(n for n in item.notes if n not in found)
        openings = sum(c.openings for c in new)
        turns = sum(len(c.messages) for c in new)
        summaries = sum(len(c.summaries) for c in new)
        if new:
            found.append(
                f"{turns} agent turns became messages; {openings} Researcher openings were kept "
                f"as each day's opening; {summaries} day summaries were read from the next day's "
                "opening"
            )
        if any(c.model.startswith("ollama:") for e in experiments for _, c in e.llms):
            found.append(
                "model strings without a backend became ollama:… (gpt-… became openai:…); "
                f"Ollama entries carry num_ctx {rc.REFERENCE_NUM_CTX}, the context the reference "
                "built its models with"
            )
        if any(c.model.startswith("openai:") for e in experiments for _, c in e.llms):
            found.append(
                "the reference sent no sampling parameters to OpenAI models; the imported "
                "entries keep the ones it listed, so a re-run applies them"
            )
        if self.stray_messages:
            found.append(f"{self.stray_messages} reference messages belong to no conversation")
        return found

    def to_json(self, dry_run: bool) -> dict:
        return {
            "source": self.source,
            "db_name": self.db_name,
            "dry_run": dry_run,
            "counts": {name: vars(t) for name, t in self.tallies.items()},
            "skipped": [vars(s) for s in self.skipped],
            "notes": self.notes(),
            "experiments": [e.id for e in self.new_experiments],
            "conversations": [c.id for c in self.new_conversations],
        }


# ---- the source ------------------------------------------------------------------------------


def open_source(uri: str, db_name: str, timeout_ms: int = 5000) -> Connection:
    """Open the reference's database for reading; refuse a location or name that holds none.
    Nothing is created there: an embedded store's folder and database must already exist."""
    kind, text = classify_uri(uri, "--from")
    names = list_databases(uri, timeout_ms) if kind == "embedded" else None
    if kind == "embedded" and names is None:
        raise UserError(
            f"there is no embedded store at {Path(_file_path(text)).expanduser()}",
            field="--from",
            fix="give the folder of an existing store, or a mongodb:// URI",
        )
    if names is not None and db_name not in names:
        raise _no_database(uri, db_name, names)
    connection = open_database(text, db_name, source="--from", timeout_ms=timeout_ms)
    if kind != "embedded":
        names = database.list_databases(connection)
        if names is not None and db_name not in names:
            connection.close()
            raise _no_database(uri, db_name, names)
    return connection


def _no_database(uri: str, db_name: str, names: list[str]) -> UserError:
    listed = ", ".join(sorted(names)) or "none"
    return UserError(
        f"{redact_uri(uri)} holds no database {db_name!r} (it holds: {listed})",
        field="--db-name",
        fix="give the reference's database name with --db-name (its setup for the paper "
        f"used {DEFAULT_SOURCE_DB})",
    )


def list_databases(uri: str, timeout_ms: int = 5000) -> list[str] | None:
    """The databases at `uri` (for a menu to offer), or None when it cannot say. Reads only:
    an embedded store is listed from its folders, a server is asked."""
    kind, text = classify_uri(uri, "--from")
    if kind == "embedded":
        path = Path(_file_path(text)).expanduser()
        if not path.is_dir():
            return None
        return sorted(p.name for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    try:
        connection = open_database(text, DEFAULT_SOURCE_DB, source="--from", timeout_ms=timeout_ms)
    except UserError:
        return None
    try:
        return database.list_databases(connection)
    finally:
        connection.close()


def _file_path(uri: str) -> str:
    return uri.removeprefix("file://") if uri.startswith("file://") else uri.removeprefix("file:")


# ---- planning (reads only) ---------------------------------------------------------------------


def plan(store: Store, source: Connection, db_name: str) -> ImportPlan:
    """Read and convert the whole source; check what the target already holds. Writes nothing."""
    reference = ReferenceSource(source)
    result = ImportPlan(reference.location, db_name)
    experiments = reference.experiments()
    conversations = {_key(d["_id"]): d for d in reference.conversations()}
    claimed: set[str] = set()
    referenced = 0
    for doc in experiments:
        tally = result.tallies["experiments"]
        tally.found += 1
        ids = [_key(i) for i in _list(doc.get("conversation_ids"))]
        children = [conversations[i] for i in ids if i in conversations]
        claimed.update(ids)
        for cid in ids:
            if cid not in conversations:
                _skip(result, "conversation", cid, "listed by its experiment but not stored", 0)
        try:
            converted = rc.convert_experiment(doc, _owner_ok)
        except UNREADABLE as exc:
            tally.skipped += 1
            result.skipped.append(Skipped("experiment", _key(doc.get("_id")), _reason(exc)))
            for child in children:
                referenced += _count(child)
                _skip(
                    result,
                    "conversation",
                    _key(child["_id"]),
                    "its experiment was skipped",
                    _count(child),
                )
            continue
        result.experiments.append(converted)
        if _present(store, converted.id, "experiment"):
            result.present.add(converted.id)
            tally.present += 1
        else:
            tally.imported += 1
        for child in children:
            referenced += _count(child)
            _plan_conversation(store, reference, child, converted, db_name, result)
    for key, doc in conversations.items():
        if key not in claimed:
            _skip(result, "conversation", key, "no experiment lists it", _count(doc))
            referenced += _count(doc)
    result.stray_messages = max(0, reference.message_count() - referenced)
    return result


# A document of an unexpected shape (a string where a list was) surfaces as one of these.
UNREADABLE = (rc.Unconvertible, TypeError, ValueError, KeyError, AttributeError, IndexError)


def _reason(exc: Exception) -> str:
    if isinstance(exc, rc.Unconvertible):
        return str(exc)
    return f"its shape is not the reference tool's ({type(exc).__name__}: {exc})"


def _key(value: Any) -> str:
    try:
        return rc.oid_text(value)
    except rc.Unconvertible:
        return str(value)


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _count(conversation: dict) -> int:
    return len(_list(conversation.get("messages_ids")))


def _owner_ok(name: str) -> None:
    try:
        check_user_name(name, "creator")
    except UserError as exc:
        raise rc.Unconvertible(f"its creator {name!r} is not a usable user name") from exc


def _present(store: Store, our_id: str, kind: str) -> bool:
    repository = store.experiments if kind == "experiment" else store.conversations
    try:
        repository.get(our_id)
    except NotFound:
        return False
    return True


def _skip(result: ImportPlan, kind: str, source_id: str, reason: str, messages: int) -> None:
    result.skipped.append(Skipped(kind, source_id, reason))
    result.tallies["conversations"].found += 1
    result.tallies["conversations"].skipped += 1
    result.tallies["messages"].found += messages
    result.tallies["messages"].skipped += messages


def _plan_conversation(
    store: Store,
    reference: ReferenceSource,
    doc: dict,
    parent: rc.ExperimentImport,
    db_name: str,
    result: ImportPlan,
) -> None:
    key, count = _key(doc["_id"]), _count(doc)
    messages = reference.messages(_list(doc.get("messages_ids")))
    try:
        converted = rc.convert_conversation(doc, messages, parent, db_name)
        _owner_ok(converted.owner)
    except UNREADABLE as exc:
        _skip(result, "conversation", key, _reason(exc), count)
        return
    converted.document["experiment_version"] = store.experiments.version_of(converted.snapshot)
    result.conversations.append(converted)
    conversations, message_tally = result.tallies["conversations"], result.tallies["messages"]
    conversations.found += 1
    message_tally.found += count
    if _present(store, converted.id, "conversation"):
        result.present.add(converted.id)
        conversations.present += 1
        message_tally.present += count
    else:
        conversations.imported += 1
        message_tally.imported += count


# ---- writing -----------------------------------------------------------------------------------


def check_strict(result: ImportPlan) -> None:
    """--strict: any document that cannot be converted stops the import before a write."""
    if result.skipped:
        first = result.skipped[0]
        raise UserError(
            f"{len(result.skipped)} source documents cannot be imported (first: {first.kind} "
            f"{first.source_id}: {first.reason}); nothing was written",
            field="--strict",
            fix="fix those documents in the source, or import without --strict to skip them "
            "(each is listed in the summary)",
        )


def apply(store: Store, result: ImportPlan) -> ImportPlan:
    """Write the plan's new experiments and conversations; on any failure remove what this run
    wrote and re-raise."""
    written_experiments: list[rc.ExperimentImport] = []
    written_conversations: list[str] = []
    try:
        for item in result.new_experiments:
            if _insert_experiment(store, item, result.db_name):
                written_experiments.append(item)
            else:
                _now_present(result, item.id, "experiments", 0)
        for conversation in result.new_conversations:
            written_conversations.append(conversation.id)
            if not _write_conversation(store, conversation):
                written_conversations.pop()
                _now_present(result, conversation.id, "conversations", conversation.source_messages)
        _owners_and_favourites(store, result)
    except BaseException:
        for cid in written_conversations:
            store.messages.delete_for(cid)
            store.conversations.delete(cid)
            store.users.forget_target("conversation", cid)
        for item in written_experiments:
            store.experiments.delete(item.id, item.owner)
            store.users.forget_target("experiment", item.id)
        raise
    return result


def _now_present(result: ImportPlan, our_id: str, row: str, messages: int) -> None:
    """Another import wrote this between the plan and the write: count it as present."""
    result.present.add(our_id)
    result.tallies[row].imported -= 1
    result.tallies[row].present += 1
    result.tallies["messages"].imported -= messages
    result.tallies["messages"].present += messages


def _insert_experiment(store: Store, item: rc.ExperimentImport, db_name: str) -> bool:
    """The source's id, owner and date, and where it came from; False when another import
    wrote it meanwhile."""
    source = rc.source_block(item.source_id, db_name)
    doc = imported_document(item.experiment, item.id, item.owner, item.created_at, source)
    return store.experiments.insert_imported(doc)


def _write_conversation(store: Store, item: rc.ConversationImport) -> bool:
    """Messages and summaries first, the conversation last: a conversation that is present
    is complete, so an import stopped half-way is finished by the next one."""
    from pymongo.errors import DuplicateKeyError

    for message in item.messages:
        store.messages.insert(dict(message))
    listed = item.document["summaries"]
    for summary in item.summaries:
        store.conversations.add_summary(item.id, dict(summary), listed)
    try:
        store.conversations.create(dict(item.document))
    except DuplicateKeyError:
        return False
    return True


def _owners_and_favourites(store: Store, result: ImportPlan) -> None:
    """Last, since they are only ever added: creators become users, and the reference's
    favourite flag becomes the creator's favourite."""
    new_experiments = result.new_experiments
    new_conversations = result.new_conversations
    for owner in sorted({i.owner for i in [*new_experiments, *new_conversations]}):
        store.users.ensure(owner)
    for item in new_experiments:
        if item.favourite:
            store.users.set_favourite(item.owner, "experiment", item.id, True)
    for conversation in new_conversations:
        if conversation.favourite:
            store.users.set_favourite(conversation.owner, "conversation", conversation.id, True)
