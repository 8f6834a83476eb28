"""The report's figures: matplotlib (Agg) rendered to SVG and embedded as data URIs.

An `<img src="data:image/svg+xml;base64,…">` keeps the report one file that needs no network,
isolates each figure's SVG ids from the page and from each other, and can never run a script.
matplotlib is imported lazily so the rest of the CLI works without the analysis extra.
"""

from __future__ import annotations

import base64
import io
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from simulator.errors import UserError

# The terminal's role colour order (cyan, magenta, green, yellow, blue, red, …) in web tones.
ROLE_PALETTE = (
    "#0e7c86",
    "#a0307e",
    "#2e7d32",
    "#b08900",
    "#1f5fbf",
    "#c62828",
    "#00838f",
    "#8e24aa",
)


@dataclass
class Plot:
    """One figure: `data_uri` is None when there was nothing to draw, and `note` says why."""

    key: str
    title: str
    caption: str
    data_uri: str | None = None
    note: str = ""


def require_matplotlib() -> Any:
    """pyplot on the Agg backend, or a UserError naming the extra to install."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError(
            "the HTML report draws its plots with matplotlib, which is not installed",
            fix="pip install -e '.[analysis]'",
        ) from None
    return plt


def svg_uri(plt: Any, fig: Any, salt: str) -> str:
    buffer = io.BytesIO()
    # Text as paths: the figure looks the same without the fonts; a fixed salt and no date keep
    # the output reproducible.
    with plt.rc_context({"svg.fonttype": "path", "svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def words(row: dict) -> int:
    """Words in a message row (the measure tables may already carry the count)."""
    if isinstance(row.get("words"), int):
        return row["words"]
    return len(str(row.get("text") or "").split())


def _failed(call: dict) -> bool:
    if "ok" in call:
        return not call["ok"]
    return bool(call.get("error") or call.get("failed"))


def length_by_role(messages: list[dict], roles: list[str]) -> Plot:
    """Mean words per message at each position of the conversation, one line per role."""
    plot = Plot(
        "length",
        "Message length by role over the conversation",
        "Mean words per message at each position (all conversations in scope).",
    )
    if not messages:
        plot.note = "No messages stored yet."
        return plot
    plt = require_matplotlib()
    sums: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for row in messages:
        sums[str(row.get("role"))][int(row.get("seq") or 0) + 1].append(words(row))
    fig, ax = plt.subplots(figsize=(8, 3.6))
    for role in sorted(sums, key=lambda r: roles.index(r) if r in roles else len(roles)):
        points = sorted(sums[role].items())
        colour = ROLE_PALETTE[(roles.index(role) if role in roles else 0) % len(ROLE_PALETTE)]
        ax.plot(
            [p for p, _ in points],
            [sum(v) / len(v) for _, v in points],
            marker="o",
            markersize=3,
            color=colour,
            label=role,
        )
    ax.set_xlabel("message number")
    ax.set_ylabel("words per message")
    ax.grid(alpha=0.3)
    ax.legend(frameon=False)
    plot.data_uri = svg_uri(plt, fig, "length")
    return plot


def rates_by_model(messages: list[dict], calls: list[dict]) -> Plot:
    """Bleed (replies trimmed where the model spoke for others) and failed calls, per model."""
    plot = Plot(
        "rates",
        "Bleed and failure rates by model",
        "Bleed: share of replies trimmed because the model wrote other speakers' lines. "
        "Failures: share of calls that ended in an error (retries included).",
    )
    trimmed: dict[str, list[bool]] = defaultdict(list)
    failed: dict[str, list[bool]] = defaultdict(list)
    for row in messages:
        trimmed[str(row.get("model"))].append(bool(row.get("trimmed")))
    for row in calls:
        failed[str(row.get("model"))].append(_failed(row))
    models = sorted(set(trimmed) | set(failed))
    if not models:
        plot.note = "No messages or calls stored yet."
        return plot
    plt = require_matplotlib()

    def share(values: list[bool]) -> float:
        return sum(values) / len(values) if values else 0.0

    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.25 * len(models) + 2.4))
    xs = range(len(models))
    for offset, label, values in ((-0.2, "bleed", trimmed), (0.2, "failed calls", failed)):
        bars = ax.bar(
            [x + offset for x in xs], [share(values[m]) for m in models], 0.4, label=label
        )
        ax.bar_label(bars, fmt="%.2f", fontsize=8)  # a zero rate still shows as "0.00"
    ax.set_xticks(list(xs), models, rotation=20 if len(models) > 4 else 0, ha="right")
    ax.set_ylabel("share")
    ax.set_ylim(0, 1)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(frameon=False)
    plot.data_uri = svg_uri(plt, fig, "rates")
    return plot


def scores_by_variant(rows: list[dict], variants: dict[str, str], limit: int = 6) -> Plot:
    """Box plots of each numeric score measure, one box per variant (or cell)."""
    plot = Plot(
        "scores",
        "Score distributions by variant",
        "One box per prompt variant; each point is one conversation.",
    )
    names = sorted({k for row in rows for k in row if k.startswith("score_")})
    names = [n for n in names if any(_number(row.get(n)) for row in rows)][:limit]
    if not names:
        plot.note = "No scores stored for these conversations yet (run a scorer first)."
        return plot
    plt = require_matplotlib()
    cols = min(2, len(names))
    lines = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(lines, cols, figsize=(8, 3.2 * lines), squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        groups: dict[str, list[float]] = defaultdict(list)
        for row in rows:
            if _number(row.get(name)):
                groups[variants.get(row["conversation_id"], "(none)")].append(float(row[name]))
        labels = sorted(groups)
        ax.boxplot([groups[g] for g in labels])
        ax.set_xticks(range(1, len(labels) + 1), short_label(labels), rotation=20, ha="right")
        ax.set_title(name.removeprefix("score_"), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    fig.tight_layout()
    plot.data_uri = svg_uri(plt, fig, "scores")
    return plot


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def short_label(labels: Iterable[str], width: int = 28) -> list[str]:
    return [s if len(s) <= width else s[: width - 1] + "…" for s in labels]
