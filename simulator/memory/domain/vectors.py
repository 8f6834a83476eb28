"""A deterministic stand-in for a sentence embedding: the same text gives the same unit vector
on every machine and in every process, and different texts nearly orthogonal ones.

Why: tests, benchmarks and users without an embedding model still need vectors, and the stub
server's `/v1/embeddings` and the offline `mock:` embedder must agree, so a test can check
what came over the wire against what it expects. Built from SHAKE-256 of the text (no random
generator whose stream could change between numpy releases). It knows nothing of meaning.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with the first vector made
    import numpy as np

DEFAULT_DIM = 64


def hash_vector(text: str, dim: int = DEFAULT_DIM) -> np.ndarray:
    """A unit float32 vector of length `dim` from the text's hash."""
    import numpy as np

    if dim < 1:
        raise ValueError(f"a vector needs at least one dimension, not {dim}")
    raw = hashlib.shake_256(text.encode("utf-8")).digest(4 * dim)
    values = np.frombuffer(raw, dtype="<u4").astype(np.float64) / np.float64(2**32 - 1)
    centred = 2.0 * values - 1.0
    norm = np.linalg.norm(centred)
    return (centred / norm if norm > 0 else centred).astype(np.float32)


def hash_vectors(texts: list[str], dim: int = DEFAULT_DIM) -> np.ndarray:
    """`hash_vector` of each text, one row each: shape (len(texts), dim)."""
    import numpy as np

    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    return np.stack([hash_vector(text, dim) for text in texts])
