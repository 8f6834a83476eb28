"""The report's section "The paper's tables and figures": each of the prison paper's tables,
recomputed (analysis/prison_paper/measures.py), as a bar figure with its 95% intervals and its
table beneath, in the paper's order and with its numbering.

Figures are matplotlib SVG data URIs (plots.py), so the page stays one file under the same
Content-Security-Policy; every label is escaped here.
"""

from __future__ import annotations

from simulator.analysis.prison_paper.measures import PaperTables
from simulator.analysis.prison_paper.table import PaperTable
from simulator.analysis.report.html import e
from simulator.analysis.report.plots import require_matplotlib, short_label, svg_uri

SECTION_ID = "paper"
LINK = f'<a href="#{SECTION_ID}">The paper\'s tables</a>'


def _label(group: dict[str, str]) -> str:
    return " · ".join(str(v) for v in group.values()) or "(all)"


def paper_figure(table: PaperTable) -> str | None:
    """Horizontal bars, one per row, with the interval as error bars; None without values."""
    rows = [r for r in table.rows if r.value is not None]
    if not rows:
        return None
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.28 * len(rows)))
    ys = list(range(len(rows)))[::-1]  # the first row on top, as in the table beneath
    values = [float(r.value) for r in rows]  # type: ignore[arg-type]
    pairs = list(zip(values, rows, strict=True))
    # an interval whose end equals the value (a mean of zeros, or a t interval clipped at 0)
    # can sit a rounding error beyond it: that side draws no whisker, never a negative one
    lows = [max(v - r.ci_low, 0.0) if r.ci_low is not None else 0.0 for v, r in pairs]
    highs = [max(r.ci_high - v, 0.0) if r.ci_high is not None else 0.0 for v, r in pairs]
    ax.barh(ys, values, color="#0e7c86", alpha=0.8)
    ax.errorbar(values, ys, xerr=[lows, highs], fmt="none", ecolor="#333333", capsize=3, lw=1)
    ax.set_yticks(ys, short_label([_label(r.group) for r in rows], 48), fontsize=8)
    interval = any(r.ci_low is not None for r in rows)
    ax.set_xlabel(table.value_kind + (" (95% interval)" if interval else ""))
    ax.grid(axis="x", alpha=0.3)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    return svg_uri(plt, fig, f"paper-{table.key}")


def _number(value: float | None, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "count":
        return f"{value:.0f}"
    return f"{value:.1f}" if kind == "percent" else f"{value:.3g}"


def _table(table: PaperTable) -> str:
    heads = "".join(f"<th>{e(g)}</th>" for g in table.group_by)
    rows = "".join(
        "<tr>"
        + "".join(f"<td>{e(r.group.get(g))}</td>" for g in table.group_by)
        + f'<td class="num">{e(_number(r.value, table.value_kind))}</td>'
        + f'<td class="num">{e(_number(r.ci_low, table.value_kind))} – '
        f"{e(_number(r.ci_high, table.value_kind))}</td>" + f'<td class="num">{e(r.n)}</td></tr>'
        for r in table.rows
    )
    return (
        f'<div class="scroll"><table class="paper-table"><tr>{heads}'
        f"<th>{e(table.value_kind)}</th><th>95% interval</th><th>n</th></tr>{rows}</table></div>"
    )


def paper_section(found: PaperTables) -> str:
    """The section, or "" where the scope has none of the paper's tables."""
    if not found.tables:
        return ""
    parts = [
        f'<section id="{SECTION_ID}"><h2>The paper\'s tables and figures</h2>',
        "<p class=muted>Campedelli et al., “I Want to Break Free!” (TMLR 2025), recomputed from "
        f"these conversations; outcomes from {e(found.labels)}. Each bar is a value with its 95% "
        "interval; the table beneath gives n.</p>",
    ]
    for table in found.tables:
        uri = paper_figure(table)
        title = f"{table.paper_ref}: {table.title}"
        image = (
            f'<img class="plot paper-figure" id="paper-{e(table.key)}" alt="{e(title)}" '
            f'src="{e(uri)}">'
            if uri
            else '<p class="muted">No values to draw.</p>'
        )
        note = f"<figcaption>{e(table.note)}</figcaption>" if table.note else ""
        parts.append(
            f'<figure class="paper-table-figure" data-key="{e(table.key)}"><h3>{e(title)} '
            f"<span class=muted>({e(table.key)})</span></h3>{image}{note}{_table(table)}</figure>"
        )
    parts.append("</section>")
    return "\n".join(parts)
