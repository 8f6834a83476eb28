"""How long retrieval takes over one agent's memory stream (simulator/memory/domain).

1. The target: `--memories` records (10,000) of one agent with `--dim`-long vectors (384, as
   MiniLM's), one retrieval = score every record (recency, importance, relevance, min-max
   scaled, weighted), take the top k, mark them accessed: median and 95th percentile of
   `--queries` retrievals, under the paper's and the reference code's settings. Target: under
   20 ms.
2. For scale: the same retrieval when the vectors are rebuilt into a matrix from the records'
   lists on every call (what caching them as one matrix saves), and the time to build the
   stream record by record.
3. With `--embedder minilm` (or any embedder string): the time to embed one query, first
   (model load) and then warm, which a retrieval with a fresh query pays on top.

    python bench/memory_retrieval.py
    python bench/memory_retrieval.py --memories 50000 --dim 768 --embedder minilm

The matrix-vector product is bound by memory, not arithmetic: on a busy machine with few
cores, OpenBLAS's threads fight the other work for them and the median jumps (1.4 ms became 8
ms on a shared 2-core box); `OPENBLAS_NUM_THREADS=1` gives steadier figures there.

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from simulator.memory.domain.records import new_record  # noqa: E402
from simulator.memory.domain.retrieval import PRESETS, score, top_k, unit_rows  # noqa: E402
from simulator.memory.domain.stream import MemoryStream  # noqa: E402

TARGET_MS = 20.0


def build(n: int, dim: int, seed: int) -> tuple[MemoryStream, np.ndarray, float]:
    """A stream of n observations a simulated minute apart, random importances and vectors;
    also the seconds it took to add them one by one."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    importance = rng.integers(1, 11, n)
    stream = MemoryStream("bench", 0)
    began = time.perf_counter()
    for seq in range(n):
        record = new_record("bench", 0, seq, "observation", f"m{seq}", seq, int(importance[seq]))
        stream.add(record, vectors[seq])
    return stream, vectors, time.perf_counter() - began


def timings(fn, queries: np.ndarray, now: int) -> list[float]:
    found = []
    for i, query in enumerate(queries):
        began = time.perf_counter()
        fn(query, now + i)
        found.append((time.perf_counter() - began) * 1000)
    return found


def summary(ms: list[float]) -> str:
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ms):7.2f} ms   p95 {p95:7.2f} ms"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--embedder", default=None, help="also time embedding a query, e.g. minilm")
    args = p.parse_args()

    stream, vectors, build_s = build(args.memories, args.dim, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    queries = rng.standard_normal((args.queries, args.dim)).astype(np.float32)
    now = args.memories + 60
    print(
        f"{args.memories:,} memories of one agent, {args.dim}-long vectors, "
        f"{args.queries} queries; numpy {np.__version__}"
    )
    print(
        f"building the stream record by record: {build_s:.2f} s "
        f"({build_s / args.memories * 1e6:.1f} us per record)"
    )

    cached_medians = {}
    for name, settings in PRESETS.items():
        ms = timings(lambda q, t, s=settings: stream.retrieve(q, t, s), queries, now)
        cached_medians[name] = statistics.median(ms)
        verdict = "met" if statistics.median(ms) < TARGET_MS else "MISSED"
        print(
            f"retrieve, {name:9s} (top {settings.top_k:2d}): {summary(ms)}   "
            f"target < {TARGET_MS:g} ms {verdict}"
        )

    rows = [vectors[i].tolist() for i in range(args.memories)]
    importance = np.array([r.importance for r in stream.records], dtype=np.float64)
    last = np.array([r.last_accessed for r in stream.records])

    def rebuilt(query: np.ndarray, at: int) -> None:
        matrix = unit_rows(np.asarray(rows, dtype=np.float32))  # what the cache saves
        top_k(score(importance, last, matrix, query, at, PRESETS["paper"]).total, 10)

    few = queries[: max(5, args.queries // 20)]
    ms = timings(rebuilt, few, now)
    ratio = statistics.median(ms) / cached_medians["paper"]
    print(
        f"retrieve, paper, vectors rebuilt from lists each call: {summary(ms)}   "
        f"({ratio:.0f}x the cached matrix)"
    )

    if args.embedder:
        from simulator.llm.embeddings import create_embedder

        embedder = create_embedder(args.embedder, cached=False)
        began = time.perf_counter()
        embedder.embed(["what did Isabella say about the party?"])
        first = time.perf_counter() - began
        ms = [0.0] * 20
        for i in range(len(ms)):
            began = time.perf_counter()
            embedder.embed([f"what happened at the cafe on day {i}?"])
            ms[i] = (time.perf_counter() - began) * 1000
        print(
            f"embedding one query with {embedder.name}: first {first:.2f} s (load), "
            f"then {summary(ms)}"
        )


if __name__ == "__main__":
    main()
