"""The network report's figures, drawn like the other reports' (matplotlib SVG as data URIs).

A run's figures put the model and its theory twin together: the mean opinion and the share
Yes on the same axes (solid: the model, dashed: the theory), each agent's opinion over the
rounds side by side, and the graph at one round side by side, nodes coloured by opinion and
filled for Yes, a ring for No, placed by a spring layout with a fixed seed so both panels and
every report of the same graph look alike. Node groups carry SVG ids (`nodes-yes-P`,
`nodes-no-P` for panel P) so a reader or a test can count them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx

from simulator.analysis.report.plots import ROLE_PALETTE, Plot, require_matplotlib, svg_uri

LAYOUT_SEED = 1
MODEL_COLOUR, THEORY_COLOUR = ROLE_PALETTE[4], ROLE_PALETTE[5]
OPINION_MAP = "coolwarm_r"  # 0 red (against) .. 10 blue (for)


def _text(value: object) -> str:
    """Text for matplotlib: `$` would start mathtext."""
    return str(value).replace("$", r"\$")


def layout(graph: nx.Graph) -> dict[int, tuple[float, float]]:
    """Node positions (fixed seed; self-loops do not pull a node anywhere)."""
    plain = nx.Graph()
    plain.add_nodes_from(graph.nodes())
    plain.add_edges_from((u, v) for u, v in graph.edges() if u != v)
    iterations = 50 if plain.number_of_nodes() <= 500 else 25
    found = nx.spring_layout(plain, seed=LAYOUT_SEED, iterations=iterations)
    return {int(node): (float(x), float(y)) for node, (x, y) in found.items()}


def trajectory_plot(key: str, model: dict, theory: dict | None, label: str) -> Plot:
    """Mean opinion and share Yes per round: the model solid, its theory twin dashed."""
    plot = Plot(
        key,
        "Mean opinion and share Yes, model and theory",
        f"{label}. Solid: the model; dashed: its theory twin (same graph, agents, scenario "
        "and rounds). Round 0 is the agents table, the same for both.",
    )
    if not model["rounds"]:
        plot.note = "No complete round stored yet."
        return plot
    plt = require_matplotlib()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.3))
    for ax, name, ylabel, top in (
        (axes[0], "mean_opinion", "mean opinion (0..10)", 10),
        (axes[1], "share_yes", "share deciding Yes", 1),
    ):
        ax.plot(model["rounds"], model[name], color=MODEL_COLOUR, marker="o", label="model")
        if theory and theory["rounds"]:
            ax.plot(
                theory["rounds"],
                theory[name],
                color=THEORY_COLOUR,
                marker="s",
                linestyle="--",
                label="theory twin",
            )
        ax.set_ylim(-0.03 * top, 1.03 * top)
        ax.set_xlabel("round")
        ax.set_ylabel(ylabel)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
    axes[0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    plot.data_uri = svg_uri(plt, fig, key)
    return plot


def agents_plot(key: str, panels: Sequence[tuple[str, list[list[int]]]], label: str) -> Plot:
    """Each agent's opinion over the rounds, one thin line per agent, one panel per run."""
    plot = Plot(
        key,
        "Each agent's opinion over the rounds",
        f"{label}. One thin line per agent (slightly jittered so equal opinions stay "
        "visible); the thick line is the mean.",
    )
    panels = [(title, table) for title, table in panels if table]
    if not panels:
        plot.note = "No complete round stored yet."
        return plot
    plt = require_matplotlib()
    from matplotlib.collections import LineCollection

    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.6 * len(panels), 3.3), squeeze=False, sharey=True
    )
    for ax, (title, table), colour in zip(
        axes[0], panels, (MODEL_COLOUR, THEORY_COLOUR), strict=False
    ):
        rounds = list(range(len(table)))
        agents = len(table[0])
        lines = [
            [(t, row[i] + (i / max(agents - 1, 1) - 0.5) * 0.3) for t, row in enumerate(table)]
            for i in range(agents)
        ]  # one collection, not a plot per agent: a thousand agents draw in one go
        ax.add_collection(LineCollection(lines, colors=colour, alpha=0.25, linewidths=0.7))
        ax.plot(rounds, [sum(row) / len(row) for row in table], color="#1d232a", lw=2.2)
        ax.set_title(_text(title), fontsize=10)
        ax.set_xlabel("round")
        ax.set_ylim(-0.5, 10.5)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("opinion (0..10)")
    fig.tight_layout()
    plot.data_uri = svg_uri(plt, fig, key)
    return plot


def graph_plot(
    key: str,
    graph: nx.Graph,
    positions: dict[int, tuple[float, float]],
    panels: Sequence[tuple[str, list[int], list[bool]]],
    caption: str,
) -> Plot:
    """The graph once per panel (title, opinions, decisions): colour = opinion, filled = Yes,
    ring = No; edges are the round's (self-loops left out)."""
    plot = Plot(key, "The network", caption)
    if not panels:
        plot.note = "No complete round stored yet."
        return plot
    plt = require_matplotlib()
    from matplotlib.colors import Normalize

    norm, cmap = Normalize(0, 10), plt.get_cmap(OPINION_MAP)
    n = graph.number_of_nodes()
    size = max(8.0, min(90.0, 4000.0 / max(n, 1)))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.8), squeeze=False)
    edges = [(u, v) for u, v in graph.edges() if u != v]
    for p, (ax, (title, opinions, decisions)) in enumerate(zip(axes[0], panels, strict=True)):
        if edges:
            nx.draw_networkx_edges(
                graph, positions, edgelist=edges, ax=ax, alpha=0.18, width=0.5, node_size=size
            )
        for yes, gid in ((True, f"nodes-yes-{p}"), (False, f"nodes-no-{p}")):
            chosen = [i for i in range(n) if bool(decisions[i]) is yes]
            colours = [cmap(norm(opinions[i])) for i in chosen]
            points = ax.scatter(
                [positions[i][0] for i in chosen],
                [positions[i][1] for i in chosen],
                s=size,
                c=colours if yes else "white",
                edgecolors="#1d232a" if yes else colours,
                linewidths=0.6 if yes else 1.8,
                zorder=3,
            )
            points.set_gid(gid)
        ax.set_title(_text(title), fontsize=10)
        ax.set_axis_off()
    colourbar = fig.colorbar(
        plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=list(axes[0]), shrink=0.8, pad=0.02
    )
    colourbar.set_label("opinion (filled: Yes, ring: No)")
    plot.data_uri = svg_uri(plt, fig, key)
    return plot


def cells_plot(cells: list[dict], name: str, title: str, ylabel: str, top: float) -> Plot:
    """One line per cell of a series averaged round by round (theory cells dashed)."""
    plot = Plot(
        f"cells-{name}",
        title,
        "Mean over each cell's runs, round by round; dashed lines are theory cells.",
    )
    shown = [c for c in cells if any(v is not None for v in c["series"][name])][:10]
    if not shown:
        plot.note = "Nothing to draw yet."
        return plot
    if len(cells) > len(shown):
        plot.caption += f" The first {len(shown)} of {len(cells)} cells are drawn."
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 3.4))
    for n, cell in enumerate(shown):
        points = [(t, v) for t, v in enumerate(cell["series"][name]) if v is not None]
        theory = bool(cell.get("theory"))
        ax.plot(
            [t for t, _ in points],
            [v for _, v in points],
            color=ROLE_PALETTE[n % len(ROLE_PALETTE)],
            marker="o",
            markersize=3,
            linestyle="--" if theory else "-",
            label=_text(cell["label"])[:60],
        )
    ax.set_ylim(-0.03 * top, 1.03 * top)
    ax.set_xlabel("round")
    ax.set_ylabel(ylabel)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8)
    plot.data_uri = svg_uri(plt, fig, plot.key)
    return plot


def as_series(measures: list[dict]) -> dict[str, Any]:
    """A run's per-round measures as the series the figures and the page's data read."""
    return {
        "rounds": [m["round"] for m in measures],
        "mean_opinion": [m["mean_opinion"] for m in measures],
        "share_yes": [m["share_yes"] for m in measures],
    }
