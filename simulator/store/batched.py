"""The documents of a batch of conversations from a server, in as few queries as it answers well.

MongoDB answers `{"conversation_id": {"$in": ids}}` from the collection's (conversation_id, …)
index: one query per 500 conversations. nx-27017 (MongoDB's wire protocol over SQLite) turns
`$in` (and a plain equality) into a scan of the whole collection, and only `$eq` into an index
search: measured at 10,000 conversations x 20 messages, one `$in` of 200 conversations took
1.4 to 2.0 s (and grows with the store: an export was quadratic), 200 `$eq` queries 0.7 s.
Which of the two a server does is asked once per collection, from its own query plan
(`explain`), so neither server is named and a real MongoDB keeps one query per batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from simulator.store.embedded import OURS_FIELD, has_id_prefix, id_range, sort_key, table_of
from simulator.store.foreign import ours

IN_CHUNK = 500  # ids per `$in`


class BatchReader:
    """Reads documents by `field` for many values of it from one server collection."""

    def __init__(self, collection: Any, field: str = "conversation_id"):
        self._col, self._field = collection, field
        self._per_value: bool | None = None  # None: not asked yet

    def find(self, values: list[Any], query: dict | None = None) -> Iterator[dict]:
        """The documents matching `query` whose `field` is one of `values`: for each chunk
        (or value), in the server's natural order."""
        if self.per_value():
            for value in values:
                yield from self._col.find({**(query or {}), self._field: {"$eq": value}})
            return
        for start in range(0, len(values), IN_CHUNK):
            chunk = values[start : start + IN_CHUNK]
            yield from self._col.find({**(query or {}), self._field: {"$in": chunk}})

    def grouped(
        self, conversation_ids: list[str], order: str, legacy_prefix: str | None = None
    ) -> dict[str, list[dict]]:
        """This tool's documents of each conversation (`field` is the conversation id), each
        list in `order` (stable: ties keep the store's order, like `.sort(order, 1)`).

        On the embedded store each conversation's id range (these ids start with the
        conversation id), never its in-memory index of the whole collection (1.7 KB per
        message: 3.5 GB at 2 million). `legacy_prefix`: ids of an older scheme that say nothing
        of their conversation; a store holding any is queried instead."""
        found: dict[str, list[dict]] = {cid: [] for cid in conversation_ids}
        table = table_of(self._col)
        if table is not None and not (legacy_prefix and has_id_prefix(table, legacy_prefix)):
            for cid in conversation_ids:
                found[cid] = [
                    doc
                    for doc in id_range(table, f"{cid}-", f"{cid}.")  # "." follows "-"
                    if doc.get(self._field) == cid and OURS_FIELD in doc
                ]
        else:
            for doc in self.find(conversation_ids, ours()):
                found[doc[self._field]].append(doc)
        for docs in found.values():
            docs.sort(key=lambda d: sort_key(d.get(order)))
        return found

    def per_value(self) -> bool:
        """Whether the server searches its index for `$eq` but scans for `$in`."""
        if self._per_value is None:
            probe = "no such value: a probe"  # the plan is what counts, not the result
            indexed_in = _uses_index(self._col, {self._field: {"$in": [probe, probe + "2"]}})
            indexed_eq = _uses_index(self._col, {self._field: {"$eq": probe}})
            self._per_value = indexed_eq is True and indexed_in is False
        return self._per_value


def _uses_index(collection: Any, query: dict) -> bool | None:
    """Whether the server's plan for `query` reads an index (MongoDB: IXSCAN; SQLite behind
    nx-27017: "USING INDEX"); None when it gives no plan."""
    try:
        plan = collection.find(query).explain().get("queryPlanner", {}).get("winningPlan")
    except Exception:  # a server or user without explain: keep MongoDB's way, one `$in`
        return None
    if not plan:
        return None
    text = json.dumps(plan, default=str)
    return "IXSCAN" in text or "USING INDEX" in text or "USING COVERING INDEX" in text
