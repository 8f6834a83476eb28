"""Render a ReportContext as one self-contained HTML page.

Every stored string (model replies above all) is untrusted: tables are escaped here with
html.escape, the transcripts travel as JSON whose `<`, `>` and `&` are \\u-escaped so nothing can
close the data tag, and a Content-Security-Policy allows only this page's own script (by hash),
inline styles and data: images, so no script a reply smuggles in could run or reach the network.
"""

from __future__ import annotations

import base64
import hashlib
import json
from html import escape
from typing import Any

from simulator.analysis.report.assets import CSS, script
from simulator.analysis.report.builder import ReportContext
from simulator.analysis.report.spend_html import spend_html
from simulator.domain.invisible_chars import visible


def e(value: Any) -> str:
    """Escaped for HTML, with invisible characters (U+202E and the like) shown as markers."""
    return escape(visible("" if value is None else str(value)), quote=True)


def json_for_script(data: Any) -> str:
    """JSON safe inside <script type="application/json">: no `</script>` or `<!--` can form."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    for char, code in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(char, code)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


BRANCHES_LINK = '<a href="#branches">Branches</a>'  # only when the scope holds forks


def fmt(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "–" if value is None else e(value)
    if value != value:  # NaN
        return "–"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"


def script_csp(code: str) -> str:
    """The page's Content-Security-Policy: only `code` runs (by its hash), inline styles and
    data: images; nothing is fetched."""
    digest = base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode()
    return (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def page(title: str, csp: str, css: str, header: str, nav: str, main: str, tail: str) -> str:
    """A report page: `header` (HTML) under the title, the `nav` links, the sections
    (`main`) and what follows them (`tail`: data blocks and the script)."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}</title>
<style>{css}</style>
</head>
<body>
<header><h1>{e(title)}</h1>
<p>{header}</p></header>
<nav>{nav}</nav>
<main>
{main}
</main>
{tail}
</body>
</html>
"""


def render(ctx: ReportContext) -> str:
    code = script()
    body = "\n".join(
        (
            experiment_section(ctx.experiment),
            sweep_section(ctx),
            measures_section(ctx),
            *([_branches(ctx.branches)] if ctx.branches else []),
            _paper(ctx.paper),
            plots_section(ctx),
            transcripts_section(ctx),
        )
    )
    header = (
        f"Experiment {e(ctx.experiment_id)} · report on {e(ctx.kind)} {e(ctx.target_id)} ·\n"
        f"generated {e(ctx.generated_at)} by llm-sim"
    )
    nav = (
        '<a href="#experiment">Experiment</a><a href="#sweep">Plan and status</a>\n'
        f'<a href="#measures">Measures</a>{BRANCHES_LINK if ctx.branches else ""}'
        f"{_paper_link(ctx.paper)}\n"
        '<a href="#plots">Plots</a>\n'
        '<a href="#transcripts">Transcripts</a>'
    )
    tail = (
        f'<script type="application/json" id="data">{json_for_script(ctx.transcripts)}</script>'
        f"\n{transcript_bodies(ctx)}\n<script>{code}</script>"
    )
    return page(ctx.title, script_csp(code), CSS, header, nav, body, tail)


def _branches(data: dict) -> str:
    from simulator.analysis.report.branches_html import branches_section  # imports this module

    return branches_section(data)


def _paper(found) -> str:
    from simulator.analysis.report.prison_paper_html import paper_section  # imports this module

    return paper_section(found) if found is not None else ""


def _paper_link(found) -> str:
    from simulator.analysis.report.prison_paper_html import LINK

    return LINK if found is not None and found.tables else ""


def transcript_bodies(ctx: ReportContext) -> str:
    """One data tag per conversation (`t-0`, `t-1`, …): the page parses one only when it is
    opened, so a thousand transcripts cost nothing until read."""
    return "\n".join(
        f'<script type="application/json" id="t-{n}">{json_for_script(body)}</script>'
        for n, body in enumerate(ctx.bodies)
    )


def _sections_table(sections: list[dict]) -> str:
    rows = []
    for section in sections:
        variants = section.get("variants") or {}
        default = section.get("default_variant")
        parts = []
        if default:
            parts.append(f'<div class="variant"><b>{e(default)}</b> (default): as shown</div>')
        for name, text in variants.items():
            shown = e(text) if text is not None else '<span class="muted">(section left out)</span>'
            parts.append(
                f'<div class="variant"><b>{e(name)}</b>: <span class="pre">{shown}</span></div>'
            )
        rows.append(
            f"<tr><td>{e(section.get('title'))}</td>"
            f'<td class="pre">{e(section.get("content"))}</td>'
            f"<td>{''.join(parts) or '<span class=muted>none</span>'}</td></tr>"
        )
    return (
        "<table><tr><th>Section</th><th>Content</th><th>Variants</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def set_params(llm: dict) -> dict:
    return {k: v for k, v in (llm.get("params") or {}).items() if v is not None}


def experiment_heading(exp: dict, world: str = "") -> list[str]:
    """The experiment section's opening: its name (with the world's name, where given) and
    its note."""
    named = f" <span class=muted>({e(world)})</span>" if world else ""
    parts = [
        '<section id="experiment"><h2>Experiment</h2>',
        f"<p><strong>{e(exp.get('name'))}</strong>{named}</p>",
    ]
    if exp.get("note"):
        parts.append(f'<p class="pre muted">{e(exp["note"])}</p>')
    return parts


def experiment_section(exp: dict) -> str:
    parts = experiment_heading(exp)
    parts.append(f'<h3>Starting message</h3><p class="pre">{e(exp.get("starting_message"))}</p>')
    llms = exp.get("llms") or []
    if llms:
        items = "".join(
            f"<li>{e(llm.get('model'))} <span class=muted>"
            f"{e(json.dumps(set_params(llm)))}"
            "</span></li>"
            for llm in llms
        )
        parts.append(f"<h3>Models</h3><ul>{items}</ul>")
    groups = [
        (f"Role {role.get('name')} ({role.get('pronoun')})", role.get("sections") or [])
        for role in exp.get("roles") or []
    ]
    groups += [("Shared sections", exp.get("shared_sections") or [])]
    groups += [("Summarizer sections", exp.get("summarizer_sections") or [])]
    for title, sections in groups:
        if sections:  # folded: the prompts are long, and the results matter first
            varied = sum(1 for s in sections if s.get("variants"))
            parts.append(
                f"<details><summary><strong>{e(title)}</strong> <span class=muted>"
                f"{len(sections)} sections, {varied} with variants</span></summary>"
                f"{_sections_table(sections)}</details>"
            )
    parts.append("</section>")
    return "\n".join(parts)


def key_values(data: dict) -> str:
    rows = "".join(
        f"<tr><th>{e(k)}</th><td>{e(v if isinstance(v, str) else json.dumps(v))}</td></tr>"
        for k, v in data.items()
    )
    return f"<table>{rows}</table>"


def sweep_section(ctx: ReportContext) -> str:
    parts = ['<section id="sweep"><h2>Plan and status</h2>']
    parts.append('<div class="row">')
    if ctx.sweep:
        plan = {k: v for k, v in (ctx.sweep.get("plan") or {}).items() if k != "sample_cell"}
        plan = {"sweep": ctx.sweep.get("name"), **plan}
        parts.append('<div class="scroll"><h3>Plan</h3>' + key_values(plan) + "</div>")
    status = ctx.status
    counts = status.get("counts") or {}
    heads = "".join(f"<th>{e(k)}</th>" for k in counts)
    cells = "".join(f'<td class="num">{e(v)}</td>' for v in counts.values())
    parts.append(
        f'<div><h3>Status</h3><table id="status-table"><tr><th>total</th>{heads}'
        f'<th>complete</th></tr><tr><td class="num">{e(status.get("total"))}</td>{cells}'
        f"<td>{'yes' if status.get('complete') else 'no'}</td></tr></table>"
    )
    for key in ("calls", "tokens_out"):
        if key in status:
            parts.append(f"<span class=muted>{e(key)}: {e(status[key])}</span> ")
    parts.append("</div></div>")
    parts.append(spend_html(status.get("spend")))
    if ctx.sweep:
        parts.append(
            "<details><summary><strong>Sweep specification</strong></summary>"
            f'<div class="scroll">{key_values(ctx.sweep.get("spec") or {})}</div></details>'
        )
    else:
        parts.append(f"<p class=muted>Not a sweep: every conversation of this {e(ctx.kind)}.</p>")
    failed = status.get("failed") or []
    if failed:
        items = "".join(
            f"<li>{e(f.get('id'))} ({e(f.get('cell'))}): {e(f.get('error'))}</li>" for f in failed
        )
        parts.append(f"<h3>Failed conversations</h3><ul>{items}</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _ci(cell: dict, name: str) -> str:
    low, high = cell.get(f"{name}_ci_low"), cell.get(f"{name}_ci_high")
    if low is None and high is None:
        return ""
    return f'<span class="ci">[{fmt(low)}, {fmt(high)}]</span>'


def measures_section(ctx: ReportContext) -> str:
    parts = [
        '<section id="measures"><h2>Measures per cell</h2>',
        "<p class=muted>Mean over the cell's conversations, with its 95% confidence interval below "
        "(hover a column for its meaning).</p>",
    ]
    if not ctx.cells:
        parts.append("<p class=muted>No conversations to measure yet.</p></section>")
        return "\n".join(parts)
    heads = "".join(f'<th title="{e(desc)}">{e(name)}</th>' for name, desc in ctx.measures)
    rows = []
    for cell in ctx.cells:
        values = "".join(
            f'<td class="num">{fmt(cell.get(f"{name}_mean"))}{_ci(cell, name)}</td>'
            for name, _ in ctx.measures
        )
        rows.append(
            f'<tr><td title="{e(cell.get("cell_label"))}">'
            f"{e(cell.get('label') or cell.get('cell_label') or cell.get('cell_key'))}</td>"
            f'<td class="num">{e(cell.get("n"))}</td>{values}</tr>'
        )
    parts.append(
        '<div class="scroll"><table id="measures-table"><tr><th>cell</th><th>n</th>'
        f"{heads}</tr>{''.join(rows)}</table></div></section>"
    )
    return "\n".join(parts)


def plots_section(ctx: ReportContext) -> str:
    figures = []
    for plot in ctx.plots:
        inner = (
            f'<img class="plot" id="plot-{e(plot.key)}" alt="{e(plot.title)}" '
            f'src="{e(plot.data_uri)}">'
            if plot.data_uri
            else f'<p class="muted">{e(plot.note)}</p>'
        )
        figures.append(
            f"<figure><h3>{e(plot.title)}</h3>{inner}<figcaption>{e(plot.caption)}</figcaption>"
            "</figure>"
        )
    return (
        f'<section id="plots"><h2>Plots</h2><div class="plots">{"".join(figures)}</div></section>'
    )


def transcripts_section(ctx: ReportContext) -> str:
    shown = len(ctx.transcripts.get("conversations", []))
    note = (
        f" {ctx.left_out} more are left out (raise --transcripts-per-cell to include them)."
        if ctx.left_out
        else ""
    )
    return (
        '<section id="transcripts"><h2>Transcripts</h2>'
        f"<p class=muted>{shown} conversations; pick a cell, then a conversation.{e(note)}</p>"
        '<div class="controls"><label>Cell <select id="cell-filter">'
        '<option value="">all cells</option></select></label></div>'
        '<div class="browser"><ul id="conv-list"></ul><div id="transcript">'
        "<noscript>The transcript browser needs JavaScript.</noscript></div></div></section>"
    )
