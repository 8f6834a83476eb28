"""Figures of each scalar grid measure against a sweep's numeric factor (e.g. the message
range R of Takata et al. 2024, Fig. 9-11: measures against R = 0, 5, …, 25).

Drawn when the cells differ in exactly one numeric factor (radius, agents or steps); cells
that also differ in another factor (a model, a memory level) are one line each. Every measure
in SUMMARY with a value gets its figure, so measures added there are drawn too. A point is the
cell's mean with its 95% interval as an error bar (no bar for a single run). Each tick label
carries the SVG id `tick-<factor>-<value>`, so the values drawn can be read back from a figure.
"""

from __future__ import annotations

from simulator.analysis.report.plots import Plot, require_matplotlib, svg_uri
from simulator.worlds.grid.analysis.measures import SUMMARY
from simulator.worlds.grid.analysis.report.plots import MAX_SERIES, _colour, _label


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def numeric_factor(cells: list[dict]) -> str | None:
    """The one numeric factor whose value differs between the cells, or None (none, or
    several: a figure against one of them would mix the others)."""
    factors = list(dict.fromkeys(k for c in cells for k in c.get("cell") or {}))
    varying = [k for k in factors if len({str((c.get("cell") or {}).get(k)) for c in cells}) > 1]
    numeric = [k for k in varying if all(_number((c.get("cell") or {}).get(k)) for c in cells)]
    return numeric[0] if len(numeric) == 1 else None


def _groups(cells: list[dict], factor: str) -> dict[str, list[dict]]:
    """Cells grouped by every other differing factor (one line each), in first-seen order."""
    others = [
        k
        for k in dict.fromkeys(k for c in cells for k in c.get("cell") or {})
        if k != factor and len({str((c.get("cell") or {}).get(k)) for c in cells}) > 1
    ]
    groups: dict[str, list[dict]] = {}
    for cell in cells:
        key = " ".join(f"{k}={(cell.get('cell') or {}).get(k)}" for k in others)
        groups.setdefault(key, []).append(cell)
    return groups


def factor_plots(cells: list[dict]) -> list[Plot]:
    """One figure per SUMMARY measure against the sweep's numeric factor; none when the cells
    do not differ in exactly one."""
    factor = numeric_factor(cells)
    if factor is None:
        return []
    groups = _groups(cells, factor)
    values = sorted({(c["cell"] or {})[factor] for c in cells})
    shown = ", ".join(str(v) for v in values)
    plots = []
    for name, description in SUMMARY.items():
        if not any(c.get(f"{name}_mean") is not None for c in cells):
            continue
        plot = Plot(
            f"by-{factor}-{name}",
            f"{name} against {factor}",
            f"{description}; mean over each cell's runs with its 95% interval, at "
            f"{factor} = {shown}.",
        )
        plot.data_uri = _draw(groups, factor, values, name, plot.key)
        plots.append(plot)
    return plots


def _draw(groups: dict[str, list[dict]], factor: str, values: list, name: str, key: str) -> str:
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(4.6, 2.8))
    for n, (label, members) in enumerate(list(groups.items())[:MAX_SERIES]):
        low, high = f"{name}_ci_low", f"{name}_ci_high"
        points = sorted(
            (c["cell"][factor], c[f"{name}_mean"], c.get(low), c.get(high))
            for c in members
            if c.get(f"{name}_mean") is not None
        )
        if not points:
            continue
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        below = [y - lo if lo is not None else 0 for _, y, lo, _ in points]
        above = [hi - y if hi is not None else 0 for _, y, _, hi in points]
        ax.errorbar(
            xs,
            ys,
            yerr=[below, above],
            color=_colour(n),
            marker="o",
            markersize=4,
            capsize=3,
            label=_label(label) if label else None,
        )
    ax.set_xticks(values, [str(v) for v in values])
    for tick, value in zip(ax.get_xticklabels(), values, strict=True):
        tick.set_gid(f"tick-{factor}-{value}")
    ax.set_xlabel(factor)
    ax.set_ylabel(_label(name))
    ax.grid(alpha=0.3)
    if len(groups) > 1:
        ax.legend(frameon=False, fontsize=7)
    return svg_uri(plt, fig, key)
