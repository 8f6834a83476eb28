"""Read-only answers from the embedded store's files when they can give them, else from the
store: the same answer either way, without loading the store's query engine for the first."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from simulator.store.file_reads import FileReader
    from simulator.store.store import Store

T = TypeVar("T")


class Opens(Protocol):
    """Where a command reads (simulator/cli/context.py's AppContext): the embedded store's
    files when they are ready (None otherwise), and the store."""

    @property
    def store(self) -> Store: ...

    def file_reader(self) -> FileReader | None: ...


def answer(
    where: Opens, from_files: Callable[[FileReader], T], from_store: Callable[[Store], T]
) -> T:
    """`from_files` on the embedded store's files (store/file_reads.py) when they are ready and
    it can answer there; otherwise `from_store` on the opened store, which sets the store up,
    migrates it or says what is wrong, as every command does."""
    reader = where.file_reader()
    if reader is not None:
        from simulator.store.file_reads import NotReadHere

        try:
            return from_files(reader)
        except NotReadHere:
            pass
    return from_store(where.store)
