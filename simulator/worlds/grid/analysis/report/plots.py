"""The grid report's figures, drawn like the chat report's (matplotlib SVG as data URIs).

Cell figures (moves, clusters, hashtags per step, diversity) draw one series per cell from
`cell_summaries`; the run figures (hashtag timeline, 2D projection) draw one run's analysis,
the first replayed, since pooling hashtags or projections across runs would mean nothing.
"""

from __future__ import annotations

from simulator.analysis.report.plots import (
    ROLE_PALETTE,
    Plot,
    require_matplotlib,
    short_label,
    svg_uri,
)
from simulator.worlds.grid.analysis.emotions import EMOTIONS
from simulator.worlds.grid.analysis.moves import BUCKETS

MAX_SERIES = 10  # cells drawn in one figure; more would be unreadable
TIMELINE_TAGS = 15


def _label(text: str) -> str:
    """A cell label as matplotlib text: `$` would start mathtext."""
    return short_label([str(text).replace("$", r"\$")], 40)[0]


def _colour(n: int) -> str:
    return ROLE_PALETTE[n % len(ROLE_PALETTE)]


def _drawn(cells: list[dict]) -> tuple[list[dict], str]:
    shown = cells[:MAX_SERIES]
    more = len(cells) - len(shown)
    return shown, f" The first {MAX_SERIES} of {len(cells)} cells are drawn." if more else ""


def moves_plot(cells: list[dict]) -> Plot:
    """Share of each move and of the fallbacks, one bar per cell (pooled over its runs and
    agents): a reply naming no command has its own bar, never the stay bar."""
    plot = Plot(
        "moves",
        "Move histogram",
        "Share of all move replies, pooled over each cell's runs; fallback: replies naming no "
        "command (the agent did not move), kept apart from the stays the model chose.",
    )
    shown, more = _drawn([c for c in cells if sum(c["moves"].values())])
    if not shown:
        plot.note = "No moves stored yet."
        return plot
    plot.caption += more
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(shown)
    for n, cell in enumerate(shown):
        total = sum(cell["moves"].values())
        xs = [m + (n - (len(shown) - 1) / 2) * width for m in range(len(BUCKETS))]
        shares = [cell["moves"].get(move, 0) / total for move in BUCKETS]
        ax.bar(xs, shares, width, color=_colour(n), label=_label(cell["label"]))
    ax.set_xticks(range(len(BUCKETS)), BUCKETS)
    ax.set_ylabel("share of moves")
    ax.grid(axis="y", alpha=0.3)
    if len(shown) > 1:
        ax.legend(frameon=False, fontsize=8)
    plot.data_uri = svg_uri(plt, fig, "moves")
    return plot


def _series_plot(
    cells: list[dict], key: str, title: str, caption: str, ylabel: str, x0: int
) -> Plot:
    plot = Plot(key, title, caption)
    shown, more = _drawn([c for c in cells if any(v is not None for v in c["series"][key])])
    if not shown:
        plot.note = "Nothing to draw yet."
        return plot
    plot.caption += more
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 3.4))
    for n, cell in enumerate(shown):
        values = cell["series"][key]
        points = [(x0 + i, v) for i, v in enumerate(values) if v is not None]
        ax.plot(
            [p for p, _ in points],
            [v for _, v in points],
            color=_colour(n),
            marker="o" if len(points) < 30 else None,
            markersize=3,
            label=_label(cell["label"]),
        )
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if len(shown) > 1:
        ax.legend(frameon=False, fontsize=8)
    plot.data_uri = svg_uri(plt, fig, key)
    return plot


def clusters_plot(cells: list[dict]) -> Plot:
    return _series_plot(
        cells,
        "clusters",
        "Clusters over time",
        "DBSCAN clusters of positions (eps = the message range, torus Chebyshev distance, "
        "at least 2 agents), mean over each cell's runs; step 0 is the start.",
        "clusters",
        0,
    )


def hashtags_per_step_plot(cells: list[dict]) -> Plot:
    return _series_plot(
        cells,
        "unique_hashtags",
        "Unique hashtags per step",
        "Distinct hashtags in each step's messages, mean over each cell's runs.",
        "hashtags",
        1,
    )


def diversity_plot(cells: list[dict], note: str = "") -> Plot:
    plot = _series_plot(
        cells,
        "message_msd",
        "Message diversity over time (mean squared displacement)",
        "Mean over agents of the squared distance of each agent's message embedding "
        "(all-MiniLM-L6-v2) from its own first message, mean over each cell's runs.",
        "MSD",
        1,
    )
    if plot.data_uri is None and note:
        plot.note = note
    return plot


def hallucinations_plot(cells: list[dict]) -> Plot:
    return _series_plot(
        cells,
        "hallucinations",
        "Hallucinations per step",
        "Messages naming an object the world does not contain (the run's "
        "measures.hallucination_words), mean over each cell's runs.",
        "messages",
        1,
    )


def emotions_plot(cells: list[dict], note: str = "") -> Plot:
    """Each emotion's mean score per step, pooled over the cells (a sweep's per-cell
    figures are the factor plots): how the community's emotions shift as it talks."""
    plot = Plot(
        "emotions",
        "Emotions over time",
        "Mean NRC Emotion Lexicon score of each step's messages that hold an emotion word, "
        "per emotion, mean over the cells' step means (Takata et al. scored each message "
        "with a classifier; see the world's page for what differs).",
    )
    series = {name: [c["series"].get(f"emotion_{name}") or [] for c in cells] for name in EMOTIONS}
    if not any(v is not None for lists in series.values() for s in lists for v in s):
        plot.note = note or "No emotion scores (no message held an emotion word)."
        return plot
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 3.4))
    for n, (name, lists) in enumerate(series.items()):
        longest = max((len(s) for s in lists), default=0)
        points = []
        for at in range(longest):
            values = [s[at] for s in lists if at < len(s) and s[at] is not None]
            if values:
                points.append((at + 1, sum(values) / len(values)))
        if points:
            ax.plot([p for p, _ in points], [v for _, v in points], color=_colour(n), label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("mean score")
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8, ncol=4)
    plot.data_uri = svg_uri(plt, fig, "emotions")
    return plot


def hashtag_timeline(tags: list[dict], run_id: str, steps: int) -> Plot:
    """The steps at which each of one run's most widespread hashtags appeared."""
    plot = Plot(
        "hashtag-timeline",
        "Hashtag timeline",
        f"Run {run_id}: each mark is a step whose messages carry the hashtag "
        f"(the {TIMELINE_TAGS} used by most agents).",
    )
    chosen = sorted(tags, key=lambda t: (-t["agents"], t["first_step"]))[:TIMELINE_TAGS]
    if not chosen:
        plot.note = f"No hashtags in the messages of run {run_id}."
        return plot
    chosen.sort(key=lambda t: t["first_step"])
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 1 + 0.3 * len(chosen)))
    for n, tag in enumerate(chosen):
        ax.scatter(tag["steps"], [n] * len(tag["steps"]), marker="s", s=14, color=_colour(n))
    ax.set_yticks(range(len(chosen)), [_label(t["tag"]) for t in chosen], fontsize=8)
    ax.set_xlim(0.5, max(steps, 1) + 0.5)
    ax.invert_yaxis()
    ax.set_xlabel("step")
    ax.grid(axis="x", alpha=0.3)
    plot.data_uri = svg_uri(plt, fig, "hashtag-timeline")
    return plot


def projection_plot(points: list[list], names: list[str], run_id: str, note: str = "") -> Plot:
    """One run's messages (dots) and memories (crosses) in 2D, coloured by agent."""
    plot = Plot(
        "projection",
        "Messages and memories in 2D",
        f"Run {run_id}: sentence embeddings projected with PCA; dots are messages, crosses "
        "memories, one colour per agent.",
    )
    if not points:
        plot.note = note or f"No texts to project in run {run_id}."
        return plot
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7, 5))
    for index, name in enumerate(names):
        for kind, marker in ((0, "o"), (1, "x")):
            mine = [p for p in points if p[1] == index and p[2] == kind]
            if mine:
                ax.scatter(
                    [p[3] for p in mine],
                    [p[4] for p in mine],
                    marker=marker,
                    s=12,
                    alpha=0.7,
                    color=_colour(index),
                    label=_label(name) if kind == 0 else None,
                )
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.grid(alpha=0.3)
    if len(names) <= 12:
        ax.legend(frameon=False, fontsize=8, markerscale=1.5)
    plot.data_uri = svg_uri(plt, fig, "projection")
    return plot


def news_plot(cells: list[dict]) -> Plot:
    """How the news spread: agents whose memory names it, by step, mean per cell (runs
    with a probe only)."""
    return _series_plot(
        cells,
        "news_remembered",
        "How the news spread",
        "Agents whose memory names the news (a stream record, or the summary memory) by the "
        "end of each step, mean over each cell's runs; step 0 is the start (seed memories). "
        "The interviews after the last step are in the measures table.",
        "agents",
        0,
    )
