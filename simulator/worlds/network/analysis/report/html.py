"""Render a NetworkReportContext as one self-contained HTML page (the chat and grid pages' twin).

The same rules as html.py: stored text is escaped with `e`, data travels as JSON that cannot
close its tag, and the Content-Security-Policy runs no script at all (the page has none: its
figures are data-URI SVGs), so nothing a model wrote can run or reach the network. The plan,
per-cell measures and plots sections are the chat report's own; the comparison of each model
run with its theory twin comes first, since it is what the world is for.
"""

from __future__ import annotations

import json

from simulator.analysis.report.assets import CSS
from simulator.analysis.report.html import (
    e,
    experiment_heading,
    fmt,
    json_for_script,
    key_values,
    measures_section,
    page,
    plots_section,
    set_params,
    sweep_section,
)
from simulator.analysis.report.plots import Plot
from simulator.worlds.network.analysis.report.context import RUN_CAP, NetworkReportContext

CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
NETWORK_CSS = """
.pair { border-top: 1px solid var(--line); padding-top: 8px; margin-top: 8px; }
.pair h3 { margin-top: 4px; }
.twin-missing { color: #8a5a00; }
table.trajectory td, table.trajectory th { font-size: 12px; }
"""
RUN_COLUMNS = (
    ("mean_opinion", "mean opinion"),
    ("share_yes", "share Yes"),
    ("bimodality", "bimodality"),
    ("consistency", "consistency"),
    ("answer_fallbacks", "fallbacks"),
    ("twin_mean_opinion_rmse", "twin: mean-opinion RMSE"),
    ("twin_share_yes_rmse", "twin: share-Yes RMSE"),
    ("twin_opinion_rmse", "twin: opinion RMSE"),
    ("twin_decision_disagreement", "twin: decisions differing"),
)
RUNS_LISTED = 500  # rows of the per-run table; the export has every run


def render_network(ctx: NetworkReportContext) -> str:
    sections = (
        compare_section(ctx),  # first: the comparison is what the page is for
        network_experiment_section(ctx.experiment),
        sweep_section(ctx),  # type: ignore[arg-type]  (reads sweep, status and kind only)
        runs_section(ctx),
        measures_section(ctx),  # type: ignore[arg-type]
        plots_section(ctx),  # type: ignore[arg-type]
    )
    data = {"round": ctx.round_index, "runs": [_pair_data(p) for p in ctx.pairs]}
    runs = len(ctx.runs)
    header = (
        f"Opinion-network experiment {e(ctx.experiment_id)} · report on {e(ctx.kind)}\n"
        f"{e(ctx.target_id)} · {runs} run{'' if runs == 1 else 's'} ·\n"
        f"generated {e(ctx.generated_at)} by llm-sim"
    )
    nav = (
        '<a href="#compare">Model and theory</a><a href="#experiment">Experiment</a>\n'
        '<a href="#sweep">Plan and status</a><a href="#runs">Runs</a>'
        '<a href="#measures">Measures</a>\n'
        '<a href="#plots">Plots</a>'
    )
    tail = f'<script type="application/json" id="network-data">{json_for_script(data)}</script>'
    return page(ctx.title, CSP, CSS + NETWORK_CSS, header, nav, "\n".join(sections), tail)


def _pair_data(pair: dict) -> dict:
    """What the page's data block carries per drawn run: both series, the twin, the rounds."""
    keys = ("id", "model", "seed", "twin", "twin_seed", "distance", "drawn_round", "series")
    return {k: pair[k] for k in keys}


def network_experiment_section(exp: dict) -> str:
    network = exp.get("network") or {}
    parts = experiment_heading(exp, "opinion network")
    shown = {k: v for k, v in network.items() if k != "theory"}
    parts.append("<h3>Network</h3>" + key_values(shown))
    if network.get("theory"):
        parts.append("<h3>Theory parameters</h3>" + key_values(network["theory"]))
    items = "".join(
        f"<li>{e(llm.get('model'))} <span class=muted>{e(json.dumps(set_params(llm)))}</span></li>"
        for llm in exp.get("llms") or []
    )
    if items:
        parts.append(f"<h3>Models</h3><ul>{items}</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _figure(plot: Plot) -> str:
    inner = (
        f'<img class="plot" id="plot-{e(plot.key)}" alt="{e(plot.title)}" src="{e(plot.data_uri)}">'
        if plot.data_uri
        else f'<p class="muted">{e(plot.note)}</p>'
    )
    return (
        f"<figure><h4>{e(plot.title)}</h4>{inner}<figcaption>{e(plot.caption)}</figcaption>"
        "</figure>"
    )


def trajectory_table(pair: dict) -> str:
    """The two trajectories as numbers, round by round (the figure's data, readable)."""
    model, theory = pair["series"]["model"], pair["series"]["theory"] or {}
    rounds = sorted(set(model["rounds"]) | set(theory.get("rounds") or []))
    heads = "<th>round</th><th>model: mean opinion</th><th>model: share Yes</th>"
    if theory:
        heads += "<th>theory: mean opinion</th><th>theory: share Yes</th>"

    def cell(series: dict, name: str, t: int) -> str:
        at = series["rounds"].index(t) if t in series.get("rounds", []) else None
        return f'<td class="num">{fmt(None if at is None else series[name][at])}</td>'

    rows = "".join(
        f'<tr><td class="num">{t}</td>{cell(model, "mean_opinion", t)}'
        f"{cell(model, 'share_yes', t)}"
        + (f"{cell(theory, 'mean_opinion', t)}{cell(theory, 'share_yes', t)}" if theory else "")
        + "</tr>"
        for t in rounds
    )
    twin = (pair["twin"] or {}).get("id") or ""
    return (
        f'<table class="trajectory" data-run="{e(pair["id"])}" data-twin="{e(twin)}">'
        f"<tr>{heads}</tr>{rows}</table>"
    )


def _distance(pair: dict) -> str:
    if pair["distance_rounds"] is None:
        return ""
    d = pair["distance"]
    return (
        f"<p>Distance to the twin over rounds 0..{pair['distance_rounds'] - 1}: mean-opinion "
        f"RMSE {fmt(d['twin_mean_opinion_rmse'])}, share-Yes RMSE "
        f"{fmt(d['twin_share_yes_rmse'])}, per-agent opinion RMSE "
        f"{fmt(d['twin_opinion_rmse'])}, decisions differing "
        f"{d['twin_decision_disagreement']:.0%} <span class=muted>(RMSE between the two "
        "series round by round; 0 is the same trajectory)</span>.</p>"
    )


def _last_round(pair: dict) -> str:
    """Where the two trajectories end, in words."""

    def end(series: dict | None) -> str:
        if not series or not series["rounds"]:
            return "no complete round yet"
        return (
            f"mean opinion {fmt(series['mean_opinion'][-1])}, "
            f"{series['share_yes'][-1]:.0%} Yes at round {series['rounds'][-1]}"
        )

    model, theory = pair["series"]["model"], pair["series"]["theory"]
    if pair["theory"]:
        return f"<p>The theory: {e(end(model))}.</p>"
    twin = f"; the theory: {e(end(theory))}" if theory is not None else ""
    kept = ""
    if pair.get("answer_fallbacks"):  # never let a flat line pass for a model's choice
        kept = (
            f"<p><strong>{pair['answer_fallbacks']} of {pair['answers']} model answers were "
            "kept from the round before</strong>: no reply parsed after three tries "
            "(<code>answer_fallbacks</code>), so the model's line moves only where its "
            "replies parsed.</p>"
        )
    return f"<p>The model: {e(end(model))}{twin}.</p>{kept}"


def _pair(n: int, pair: dict) -> str:
    seed = "no seed" if pair["seed"] is None else f"seed {pair['seed']}"
    rep = "" if pair["repetition"] is None else f" · #{e(pair['repetition'])}"
    if pair["theory"]:
        twin_line = "<p class=muted>A theory run (no model).</p>"
    elif pair["twin"] is None:
        twin_line = f'<p class="twin-missing">{e(pair["twin_note"])}</p>'
    else:
        twin_line = (
            f"<p>Beside its theory twin <strong>{e(pair['twin']['id'])}</strong> "
            f"<span class=muted>({e(pair['twin']['match'])}: seed {e(pair['twin_seed'])})</span>"
            "</p>"
        )
    figures = "".join(_figure(plot) for plot in pair["figures"])
    body = (
        f"{twin_line}{_last_round(pair)}{_distance(pair)}<div class=plots>{figures}</div>"
        f'<details><summary>Trajectories as numbers</summary><div class="scroll">'
        f"{trajectory_table(pair)}</div></details>"
    )
    head = (
        f"<strong>{e(pair['id'])}</strong> · {e(pair['model'])} · {e(seed)} · "
        f"{e(pair['status'])} <span class=muted>{e(pair['cell'])}{rep}</span>"
    )
    return (
        f'<details class="pair" id="pair-{n}"{" open" if n == 0 else ""}>'
        f"<summary>{head}</summary>{body}</details>"
    )


def compare_section(ctx: NetworkReportContext) -> str:
    shown = len(ctx.pairs)
    parts = [
        '<section id="compare"><h2>Model and theory, side by side</h2>',
        "<p class=muted>Each LLM run beside its theory twin: the coevolution theory (Zino, Ye, "
        "Cao) played on the same graph, agents table, scenario and rounds, with the same seed "
        "where one was stored. Solid lines: the model; dashed: the theory.",
    ]
    if ctx.left_out:
        parts.append(
            f" {shown} of {shown + ctx.left_out} runs are drawn (at most {RUN_CAP}, taken cell "
            "by cell; lower --transcripts-per-cell to spread them over more cells)."
        )
    parts.append("</p>")
    parts += [_pair(n, pair) for n, pair in enumerate(ctx.pairs)]
    if not ctx.pairs:
        parts.append("<p class=muted>No runs yet.</p>")
    parts.append("</section>")
    return "\n".join(parts)


def runs_section(ctx: NetworkReportContext) -> str:
    heads = "".join(f"<th>{e(title)}</th>" for _, title in RUN_COLUMNS)
    rows = []
    for run in ctx.runs[:RUNS_LISTED]:
        twin = run["twin"] or {}
        values = "".join(f'<td class="num">{fmt(run.get(name))}</td>' for name, _ in RUN_COLUMNS)
        rows.append(
            f"<tr><td>{e(run['conversation_id'])}</td><td>{e(run['model'])}</td>"
            f'<td class="num">{fmt(run["seed"])}</td><td>{e(run["status"])}</td>'
            f'<td class="num">{e(run["rounds_stored"])}</td>{values}'
            f"<td>{e(twin.get('id') or ('–' if run['theory'] else 'none'))}"
            f"{' (' + e(twin['match']) + ')' if twin else ''}</td></tr>"
        )
    more = len(ctx.runs) - RUNS_LISTED
    note = (
        f"<p class=muted>{more} more runs: 'llm-sim export' lists every one.</p>"
        if more > 0
        else ""
    )
    return (
        '<section id="runs"><h2>Runs</h2><p class=muted>Each run at its last complete round; '
        "for an LLM run, the distance to its theory twin.</p>"
        '<div class="scroll"><table id="runs-table"><tr><th>run</th><th>model</th><th>seed</th>'
        f"<th>status</th><th>rounds</th>{heads}<th>theory twin</th></tr>{''.join(rows)}</table>"
        f"</div>{note if more > 0 else ''}</section>"
    )
