"""One stored run as `conversation show` (and its --json) reads it: the run document and the
rows its world stores (a chat's messages and day summaries, a grid's steps, a network's
rounds), a fork's shared ones first.

A world whose runs store one row per agent and step (`RUN_UNIT`) needs nothing here: its rows
are read under `<RUN_UNIT>s` ("steps", "rounds"). A world that stores something else ships a
`services/transcript.py` part (`WorldTranscript`).
"""

from __future__ import annotations

from typing import Protocol

from simulator.domain.world import domain_of
from simulator.store import lineage
from simulator.store.store import Store
from simulator.worlds import has_part, kind_of, part


class WorldTranscript(Protocol):
    def rows(self, store: Store, doc: dict) -> dict[str, list[dict]]:
        """What `transcript()` returns beside the run document, each list in order."""


def run_rows(store: Store, doc: dict) -> dict[str, list[dict]]:
    """The run's rows under their names, from its world's part or the default."""
    kind = kind_of(doc)
    if has_part(kind, "services.transcript"):
        world: WorldTranscript = part(kind, "services.transcript")  # type: ignore[assignment]
        return world.rows(store, doc)
    return {f"{domain_of(kind).RUN_UNIT}s": lineage.full_rows(store, doc)}


def transcript(store: Store, conversation_id: str) -> dict:
    """The conversation document and its rows (messages and summaries, steps or rounds; each
    row says the run that stored it: `conversation_id`), for display or --json."""
    doc = store.conversations.get(conversation_id)
    if "experiment" not in doc and doc.get("sweep_id"):
        doc["experiment"] = store.sweeps.get(doc["sweep_id"])["experiment"]
    return {"conversation": doc, **run_rows(store, doc)}
