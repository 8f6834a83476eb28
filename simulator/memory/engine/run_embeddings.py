"""The vectors of one run's memory stream: what the embedder answered, and what a resumed run
already has (its stored records' vectors and its recall queries' ledger rows), so that no text
is sent twice; every request the embedder sends is a ledger row (engine/embedding_ledger.py).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from simulator.engine.ports import MemoryShelf
from simulator.engine.step_loop import StepFailed
from simulator.llm.base import BackendError
from simulator.llm.embeddings import Embedder, aembed


class RunEmbeddings:
    def __init__(self, shelf: MemoryShelf, embedder: Embedder):
        self._shelf, self.embedder = shelf, embedder
        self._known: dict[str, np.ndarray] = {}  # text -> vector this run has (a resume's)
        self._asked: dict[int, int] = {}  # step -> embeddings asked for in it so far

    def remember_stored(self) -> None:
        """The vectors the run's ledger kept (recall queries of a run cut short)."""
        for texts, vectors in self._shelf.stored_embeddings():
            self._known.update(zip(texts, vectors, strict=True))

    def remember(self, pairs: Iterable[tuple[str, np.ndarray]]) -> None:
        """(text, vector) pairs of stored records made in this embedder's space."""
        self._known.update(pairs)

    async def embed(
        self, step: int, texts: list[str], agent: str | None, keep: bool = False
    ) -> np.ndarray:
        """The vectors of `texts` (row i for text i): those this run already has (a resume),
        the rest from the embedder, each request it sends a ledger row (`keep`: the row keeps
        the vectors, for texts no record stores: recall queries)."""
        index = self._asked.get(step, 0)  # every embedding of the step numbered, sent
        self._asked[step] = index + 1  # or not, so a resumed step numbers them the same
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if not missing:
            return np.stack([self._known[t] for t in texts])
        name = self.embedder.name
        ledger = self._shelf.embedding_recorder(step, index, agent, name, keep)
        try:
            fresh = await aembed(self.embedder, missing, ledger)
        except BackendError as exc:  # the run fails as for a chat call: said, not a traceback
            raise StepFailed(f"embedding with {name} failed: {exc}") from None
        if len(missing) == len(texts):
            return fresh
        got = dict(zip(missing, fresh, strict=True))
        return np.stack([got[t] if t in got else self._known[t] for t in texts])
