"""The party's figures beside Park et al.'s (2023, section 7): one table, "quantity | paper |
this run" for a run, or a column per sweep cell with its mean and 95% interval.

The rows and the paper's numbers are analysis/grid/party_paper.py's; a run's figures come from
its probe's measures (`paper_summary`), a cell's from `cell_summaries`. Static HTML, escaped.
"""

from __future__ import annotations

from simulator.analysis.report.html import e
from simulator.worlds.grid.analysis.party_paper import PAPER_NOTE, PAPER_ROWS, paper_summary


def _run_value(measure: str, out_of: str | None, found: dict, agents: int) -> str:
    """`k of n (share)` where the paper writes its figure so, else the value."""
    value = found.get(measure)
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    total = found.get(out_of) if out_of else (agents if measure.startswith("news_") else None)
    if total is None:
        return str(value)
    return f"{value} of {total}" + (f" ({value / total:.1%})" if total else "")


def run_paper_table(party: dict | None) -> str:
    """A run's figures beside the paper's; empty when the run's probe asked nothing."""
    found = paper_summary(party)
    if party is None or all(v is None for v in found.values()):
        return ""
    found["relationship_density"] = (party.get("relationships") or {}).get("density")
    agents = len((party.get("news") or {}).get("per_agent") or [])
    rows = "".join(
        f"<tr><th>{e(r.quantity)}</th><td>{e(r.paper)}</td>"
        f"<td class=num>{e(_run_value(r.measure, r.out_of, found, agents))}</td></tr>"
        for r in PAPER_ROWS
    )
    return _table("<th>this run</th>", rows)


def _cell_value(cell: dict, name: str) -> str:
    mean = cell.get(f"{name}_mean")
    if mean is None:
        return "–"
    low, high = cell.get(f"{name}_ci_low"), cell.get(f"{name}_ci_high")
    interval = f" [{low:.3g}, {high:.3g}]" if low is not None and high is not None else ""
    return f"{mean:.3g}{interval}"


def cells_paper_table(cells: list[dict]) -> str:
    """Each cell's mean [95% CI] beside the paper's; empty when no cell has a party figure."""
    names = [r.measure for r in PAPER_ROWS]
    shown = [c for c in cells if any(c.get(f"{n}_mean") is not None for n in names)]
    if not shown:
        return ""
    heads = "".join(
        f'<th title="{e(c.get("cell_label"))}">{e(c.get("label"))} '
        f"<span class=muted>(n = {e(c.get('n'))})</span></th>"
        for c in shown
    )
    rows = "".join(
        f"<tr><th>{e(r.quantity)}</th><td>{e(r.paper)}</td>"
        + "".join(f"<td class=num>{e(_cell_value(c, r.measure))}</td>" for c in shown)
        + "</tr>"
        for r in PAPER_ROWS
    )
    return _table(heads, rows, "Per cell: the mean over its runs with its 95% interval.")


def _table(heads: str, rows: str, note: str = "") -> str:
    return (
        "<h3>Beside Park et al. (2023)</h3>"
        f"<p class=muted>{e(PAPER_NOTE)} {e(note)}</p>"
        '<table class="paper-table"><tr><th>quantity</th><th>paper (Park et al. 2023)</th>'
        f"{heads}</tr>{rows}</table>"
    )
