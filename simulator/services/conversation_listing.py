"""Conversation listings shared by `llm-sim conversation list` and the menu's picker: your
favourites first, then the newest, a page at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simulator.errors import UserError
from simulator.services.reading import Opens, answer
from simulator.store.foreign import left_out_note

if TYPE_CHECKING:
    from simulator.store.file_reads import FileReader
    from simulator.store.store import Store

FAVOURITE_KIND = "conversation"  # what a user's favourite runs are stored under
KIND = FAVOURITE_KIND
PAGE = 50  # conversations per listing page (`conversation list`, the menu's picker)


@dataclass
class Listing:
    """One page of conversations (favourites first, then newest first) and how many match."""

    docs: list[dict]
    total: int

    @property
    def partial(self) -> bool:
        return len(self.docs) < self.total

    def showing(self, hint: str = "--all for every one") -> str | None:
        """'showing 50 of 10,000 (--all for every one)' when the page is not everything."""
        if not self.partial:
            return None
        return f"showing {len(self.docs):,} of {self.total:,} ({hint})"


def check_limit(limit: int | None, every: bool) -> int | None:
    """The page size a listing asked for (None: all); UserError for 0, negatives or both."""
    if every and limit is not None:
        raise UserError(
            "--limit and --all ask for different things",
            field="--limit",
            fix="give --limit N for the newest N, or --all for every one",
        )
    if every:
        return None
    if limit is None:
        return PAGE
    if limit < 1:
        raise UserError(
            f"{limit} conversations is not a page",
            field="--limit",
            fix="give a positive number (default 50), or --all for every one",
        )
    return limit


def list_page(
    store: Store,
    user: str,
    experiment_id: str | None = None,
    mine: bool = False,
    limit: int | None = PAGE,
) -> Listing:
    """Your favourites first, then the newest; `limit` None lists all. Three queries however
    many conversations match (favourites, their page, the rest), plus a count when the page
    is full, so the answer does not grow with the store the way a full listing does."""
    owner = user if mine else None
    starred = store.users.favourites(user, KIND)
    docs = store.conversations.page(experiment_id, owner, limit, only=starred) if starred else []
    rest = None if limit is None else limit - len(docs)
    if rest is None or rest > 0:
        docs += store.conversations.page(experiment_id, owner, rest, exclude=starred)
    for doc in docs:
        doc["favourite"] = doc["_id"] in starred
    full = limit is not None and len(docs) >= limit
    total = store.conversations.count(experiment_id, owner) if full else len(docs)
    return Listing(docs, total)


def page_and_note(
    where: Opens, user: str, experiment_id: str | None, mine: bool, limit: int | None
) -> tuple[Listing, str | None]:
    """`list_page` and `foreign_note`, from the embedded store's files when they can answer
    (store/file_reads.py: no query engine to load), else from the store."""

    def from_files(reader: FileReader) -> tuple[Listing, str | None]:
        from simulator.store.file_reads import FileListingStore

        files: Any = FileListingStore(reader)  # the parts of a Store these two ask about
        return list_page(files, user, experiment_id, mine, limit), foreign_note(files)

    def from_store(store: Store) -> tuple[Listing, str | None]:
        return list_page(store, user, experiment_id, mine, limit), foreign_note(store)

    return answer(where, from_files, from_store)


def list_docs(
    store: Store, user: str, experiment_id: str | None = None, mine: bool = False
) -> list[dict]:
    """Every matching conversation, favourites first, then newest first."""
    return list_page(store, user, experiment_id, mine, limit=None).docs


def listed(store: Store, user: str, conversation_id: str) -> dict:
    """One conversation as a listing shows it (with this user's favourite flag)."""
    doc = store.conversations.get(conversation_id)
    doc["favourite"] = store.users.is_favourite(user, KIND, conversation_id)
    return doc


def foreign_note(store: Store) -> str | None:
    """Listing leaves the reference tool's documents out; this sentence says how many and how to
    import them (None when the database holds none)."""
    counts = store.foreign_counts(("experiments", "conversations"))  # messages: a long scan
    return left_out_note(counts, store.import_command)
