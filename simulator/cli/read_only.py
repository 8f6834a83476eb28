"""Read-only commands answered from the embedded store's files when they can be (no query
engine, no MongoDB driver to load: store/file_store.py), else by the opened store.

A command passes the question it would ask of the store (`question(store)`); it is asked of
the files first, and of the store when the files are not set up as expected or hold something
they leave to it (an id not found, another tool's document). The answer is the same either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from simulator.services.reading import Opens, answer

if TYPE_CHECKING:
    from simulator.store.file_reads import FileReader

T = TypeVar("T")


def read_only(where: Opens, question: Callable[[Any], T]) -> T:
    """`question` of the embedded store's files (a FileStore) when they answer it, else of
    the store."""

    def from_files(reader: FileReader) -> T:
        from simulator.store.file_store import FileStore

        return question(FileStore(reader))

    return answer(where, from_files, question)
