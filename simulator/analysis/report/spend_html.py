"""The report's spend: what was spent, and per cell beside the sweep's estimate when it has one."""

from __future__ import annotations

from html import escape

from simulator.domain.budget import describe_spend, money


def _e(value: object) -> str:
    return escape("" if value is None else str(value))


def _cost(value: float | None, unknown: int = 0) -> str:
    if value is None:
        return f"unknown ({unknown:,} calls)" if unknown else "unknown"
    return money(value)


def spend_html(report: dict | None) -> str:
    """A "Spend" block: the total line, then one row per cell (estimate beside actual)."""
    if not report:
        return ""
    parts = ['<div id="spend"><h3>Spend</h3>']
    parts.append(f"<p>{_e(describe_spend(report['total']))}</p>")
    cells = report.get("cells") or []
    if cells:
        estimated = report.get("estimated")
        heads = ["cell", "calls", "tokens", "cost", "seconds of calls"]
        if estimated:
            heads = ["cell", "calls (estimate)", "calls", "tokens (estimate)", "tokens",
                     "cost (estimate)", "cost", "seconds of calls"]  # fmt: skip
        rows = []
        for cell in cells:
            actual = [cell["calls"], f"{cell['tokens']:,}",
                      _cost(cell["cost"], cell["cost_unknown_calls"])]  # fmt: skip
            if estimated:
                guess = cell.get("estimate_cost")
                values = [cell["cell"], cell["estimate_calls"], actual[0],
                          cell["estimate_tokens"], actual[1],
                          "unknown" if guess is None else money(guess), actual[2]]  # fmt: skip
            else:
                values = [cell["cell"], *actual]
            values.append(cell["call_seconds"])
            rows.append("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in values) + "</tr>")
        head = "".join(f"<th>{_e(h)}</th>" for h in heads)
        parts.append(f'<div class="scroll"><table id="spend-table"><tr>{head}</tr>')
        parts.append("".join(rows) + "</table></div>")
        if estimated and report.get("method"):
            parts.append(f"<p class=muted>Estimate's tokens: {_e(report['method'])}</p>")
    parts.append("</div>")
    return "".join(parts)
