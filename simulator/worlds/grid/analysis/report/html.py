"""Render a GridReportContext as one self-contained HTML page (the chat page's twin).

The same rules as html.py: stored text is escaped with `e`, data travels as JSON that cannot
close its tag, and the Content-Security-Policy lets only this page's own script run (by hash),
so nothing a model wrote can run or reach the network. The plan, measures and plots sections
are the chat report's own; the experiment, replay and per-agent sections are the grid's.
"""

from __future__ import annotations

import json

from simulator.analysis.report.assets import CSS
from simulator.analysis.report.html import (
    e,
    experiment_heading,
    json_for_script,
    key_values,
    measures_section,
    page,
    plots_section,
    script_csp,
    set_params,
    sweep_section,
)
from simulator.worlds.grid.analysis.report.assets import GRID_CSS, grid_script
from simulator.worlds.grid.analysis.report.context import REPLAY_CAP, GridReportContext
from simulator.worlds.grid.analysis.report.memory_html import memory_section
from simulator.worlds.grid.domain.rules import MOVES

WORLD_FIELDS = ("width", "height", "torus", "agents", "steps", "radius", "initial_memory")
HASHTAGS_SHOWN = 20


def render_grid(ctx: GridReportContext) -> str:
    code = grid_script()
    sections = (
        grid_experiment_section(ctx.experiment),
        sweep_section(ctx),  # type: ignore[arg-type]  (reads sweep, status and kind only)
        measures_section(ctx) + notes_block(ctx.notes),  # type: ignore[arg-type]
        plots_section(ctx),  # type: ignore[arg-type]
        replay_section(ctx),
        agents_section(ctx),
        *([memory_section(ctx.memories, ctx.cells)] if ctx.memories else []),
    )
    bodies = "\n".join(
        f'<script type="application/json" id="r-{n}">{json_for_script(body)}</script>'
        for n, body in enumerate(ctx.bodies)
    )
    header = (
        f"Grid experiment {e(ctx.experiment_id)} · report on {e(ctx.kind)} {e(ctx.target_id)} ·\n"
        f"{e(ctx.runs)} run{'' if ctx.runs == 1 else 's'} ·\n"
        f"generated {e(ctx.generated_at)} by llm-sim"
    )
    nav = (
        '<a href="#experiment">Experiment</a><a href="#sweep">Plan and status</a>\n'
        '<a href="#measures">Measures</a><a href="#plots">Plots</a><a href="#replay">Replay</a>\n'
        '<a href="#agents">Agents</a>' + ('<a href="#memory">Memory</a>' if ctx.memories else "")
    )
    replays = json_for_script({"runs": ctx.replays})
    tail = (
        f'<script type="application/json" id="grid-data">{replays}</script>\n'
        f"{bodies}\n<script>{code}</script>"
    )
    return page(ctx.title, script_csp(code), CSS + GRID_CSS, header, nav, "\n".join(sections), tail)


def grid_experiment_section(exp: dict) -> str:
    world = exp.get("world") or {}
    parts = experiment_heading(exp, "grid world")
    shown = {name: world.get(name) for name in WORLD_FIELDS if name in world}
    if world.get("positions") is not None:
        shown["positions"] = world["positions"]
    parts.append("<h3>World</h3>" + key_values(shown))
    llms = exp.get("llms") or []
    if llms:
        items = "".join(
            f"<li>{e(llm.get('model'))} <span class=muted>{e(json.dumps(set_params(llm)))}"
            "</span></li>"
            for llm in llms
        )
        parts.append(f"<h3>Models</h3><ul>{items}</ul>")
    prompts = exp.get("prompts") or {}
    if prompts:
        rows = "".join(
            f'<tr><th>{e(stage)}</th><td class="pre">{e(text)}</td></tr>'
            for stage, text in prompts.items()
        )
        parts.append(
            "<details><summary><strong>Prompts</strong> <span class=muted>message, memory, "
            f"move</span></summary><table>{rows}</table></details>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def notes_block(notes: list[str]) -> str:
    return "".join(f'<p class="muted note">{e(note)}</p>' for note in notes)


def replay_section(ctx: GridReportContext) -> str:
    shown = len(ctx.replays)
    note = (
        f" {ctx.left_out} more runs are left out (at most {REPLAY_CAP} are replayed, taken "
        "cell by cell; lower --transcripts-per-cell to spread them over more cells)."
        if ctx.left_out
        else ""
    )
    return (
        '<section id="replay"><h2>Replay</h2>'
        f"<p class=muted>{shown} of {ctx.runs} runs. Choose a run and a step: dots are agents "
        "(outlined when in a cluster; y grows upwards); below, what each agent wrote in that "
        f"step and remembered after it.{e(note)}</p>"
        '<div class="controls"><label>Run <select id="replay-run"></select></label>'
        '<button type="button" id="replay-play">play</button> '
        '<input type="range" id="replay-step" min="0" max="0" value="0" step="1" '
        'aria-label="step"><span id="replay-label"></span></div>'
        '<div class="replay"><svg id="replay-field" xmlns="http://www.w3.org/2000/svg" '
        'viewBox="0 0 1 1" role="img" aria-label="agents on the field"></svg>'
        '<div id="replay-detail"><noscript>The replay needs JavaScript.</noscript></div>'
        "</div></section>"
    )


def _agents_table(run: dict) -> str:
    heads = "".join(f"<th>{e(m)}</th>" for m in MOVES)
    rows = []
    for agent in run["agents"]:
        counts = "".join(f'<td class="num">{e(agent["moves"].get(m, 0))}</td>' for m in MOVES)
        words = ", ".join(f"{word} ({n})" for word, n in agent["words"])
        rows.append(
            f"<tr><td>{e(agent['name'])}</td>{counts}"
            f'<td class="num">{e(agent["fallbacks"])}</td>'
            f'<td class="num">{e(agent.get("hallucinations", 0))}</td>'
            f"<td>{e(words) or '–'}</td></tr>"
        )
    return (
        f'<table class="agents-table"><tr><th>agent</th>{heads}<th>fallback</th>'
        f"<th>hallucinations</th><th>top words (messages)</th></tr>{''.join(rows)}</table>"
    )


def _hashtags_table(tags: list[dict]) -> str:
    if not tags:
        return "<p class=muted>No hashtags.</p>"
    chosen = sorted(tags, key=lambda t: (-t["agents"], t["first_step"]))[:HASHTAGS_SHOWN]
    rows = "".join(
        f"<tr><td>{e(t['tag'])}</td><td class=num>{e(t['first_step'])}</td>"
        f"<td>{e(t['first_user'])}</td><td class=num>{e(t['agents'])}</td>"
        f"<td class=num>{e(t['uses'])}</td><td class=num>{e(t['lifespan'])}</td></tr>"
        for t in chosen
    )
    hidden = len(tags) - len(chosen)
    more = f"<p class=muted>{hidden} more not shown.</p>" if hidden else ""
    return (
        '<table class="hashtags-table"><tr><th>hashtag</th><th>first step</th><th>first user</th>'
        f"<th>agents</th><th>messages</th><th>lifespan (steps)</th></tr>{rows}</table>{more}"
    )


def _personality_table(found: dict | None) -> str:
    """Each agent's type before step 1 and after the last step, and the count of each type
    at both times: the paper's table of types at step 0 against the end."""
    if not found:
        return ""
    types, fallbacks = found["types"], found["fallbacks"]
    rows = "".join(
        f"<tr><td>{e(name)}</td><td>{e(t.get('first') or '–')}</td>"
        f"<td>{e(t.get('last') or '–')}</td>"
        f'<td class="num">{e(sum((fallbacks.get(name) or {}).values()))}</td></tr>'
        for name, t in types.items()
    )
    counts = found["counts"]
    every = sorted({k for when in counts.values() for k in when})
    tally = "".join(
        f"<tr><td>{e(k)}</td><td class=num>{e(counts.get('first', {}).get(k, 0))}</td>"
        f"<td class=num>{e(counts.get('last', {}).get(k, 0))}</td></tr>"
        for k in every
    )
    changed = found.get("changed")
    said = "" if changed is None else f" {changed} of {found['compared']} agents changed type."
    return (
        f"<h3>Personality ({e(found['inventory'])})</h3><p class=muted>Type before step 1 "
        f"and after the last step; unclear: answers naming neither A nor B.{e(said)}</p>"
        '<table class="personality-table"><tr><th>agent</th><th>first</th><th>last</th>'
        f"<th>unclear</th></tr>{rows}</table>"
        '<table class="personality-counts"><tr><th>type</th><th>agents first</th>'
        f"<th>agents last</th></tr>{tally}</table>"
    )


def _repetition(value: object) -> str:
    return "" if value is None else f" · #{e(value)}"


def agents_section(ctx: GridReportContext) -> str:
    parts = [
        '<section id="agents"><h2>Agents</h2>',
        "<p class=muted>Per replayed run: each agent's moves (fallback: replies naming no "
        "move; the agent did not move, and they are not counted as stay), its messages naming "
        "an object the world lacks (hallucinations), its most frequent words, and the run's "
        "hashtags (lifespan: the longest run of consecutive steps in which it appeared).</p>",
    ]
    for n, run in enumerate(ctx.per_run):
        parts.append(
            f"<details{' open' if n == 0 else ''}><summary><strong>{e(run['id'])}</strong> "
            f"<span class=muted>{e(run['cell'])}{_repetition(run['repetition'])}</span></summary>"
            f"{_agents_table(run)}<h3>Hashtags</h3>{_hashtags_table(run['hashtags'])}"
            f"{_personality_table(run.get('personality'))}</details>"
        )
    if not ctx.per_run:
        parts.append("<p class=muted>No runs yet.</p>")
    parts.append("</section>")
    return "\n".join(parts)
