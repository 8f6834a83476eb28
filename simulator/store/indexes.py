"""Unique indexes that ignore documents lacking the field (other tools' documents).

A plain unique index counts a missing field as null, so two reference-tool conversations (no
`key`) collide and the index cannot be built; a sparse one skips them. Sparse rather than
partial (`partialFilterExpression`): mongomock refuses partial indexes, while sparse works on
MongoDB, mongomock and the embedded store, and nx-27017 ignores both options but never counts a
missing field as a duplicate (probed for migration 003).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from simulator.store.counting import is_server_collection

log = logging.getLogger(__name__)


def ensure_sparse_unique(collection: Any, field: str) -> None:
    """Create `field_1` as a sparse unique index, replacing an older non-sparse one.

    Idempotent and safe when two processes do it at once: a drop that finds nothing and a
    create that finds the same index already built are both fine.
    """
    from pymongo.errors import DuplicateKeyError, OperationFailure

    name = f"{field}_1"
    if _built(collection, name, field):
        return
    for _ in range(3):
        try:
            collection.create_index(field, unique=True, sparse=True, name=name)
            return
        except DuplicateKeyError:
            raise  # two of this tool's documents share a value: nothing to replace
        except OperationFailure as exc:  # same name, other options: the pre-003 index
            log.info("replacing index %s.%s (%s)", collection.name, name, exc)
            with contextlib.suppress(OperationFailure):
                collection.drop_index(name)
    collection.create_index(field, unique=True, sparse=True, name=name)


def _built(collection: Any, name: str, field: str) -> bool:
    """Whether the sparse unique index is there already. Asked first because the embedded
    store's create_index re-checks uniqueness over every document even when the index exists:
    3 s at each start with 100,000 conversations."""
    info = collection.index_information().get(name)
    return bool(
        info
        and info.get("unique")
        and info.get("sparse")
        and [tuple(k) for k in info.get("key", [])] == [(field, 1)]
    )


def drop_non_sparse(collection: Any, field: str) -> None:
    """Drop `field_1` where it is recorded without `sparse` (built before migration 003)."""
    from pymongo.errors import OperationFailure

    name = f"{field}_1"
    info = collection.index_information().get(name)
    if info is not None and not info.get("sparse"):
        with contextlib.suppress(OperationFailure):
            collection.drop_index(name)


def ensure_marker_index(collection: Any) -> None:
    """Index `schema_version` (the mark of this tool's documents, see foreign.py) on a MongoDB
    server, so counting the other tool's documents at every start is not a collection scan:
    nx-27017 took 0.9 s per collection at 100,000 conversations without it, 5 ms with it. Not on
    the embedded store, which scans in Python either way and pays for every index on insert."""
    if is_server_collection(collection):
        collection.create_index("schema_version", name="schema_version_1")
