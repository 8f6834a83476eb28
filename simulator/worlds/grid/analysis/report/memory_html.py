"""The grid report's memory section: for a replayed run with a memory stream or a probe, the
party's interviews, spread and attendance (party.py) beside Park et al.'s figures, then each
agent's memory stream (memory/analysis/report_html.py). Everything a model wrote is escaped
with `e`. Static HTML: no script.
"""

from __future__ import annotations

from simulator.analysis.report.html import e
from simulator.memory.analysis.report_html import streams_block
from simulator.worlds.grid.analysis.report.party_paper import cells_paper_table, run_paper_table


def memory_section(runs: list[dict], cells: list[dict] | None = None) -> str:
    """`runs`: per run {id, cell, repetition, browse: MemoryBrowse | None, party: dict | None};
    `cells` (a sweep's, or several runs'): the party per cell beside Park et al.'s figures."""
    parts = [
        '<section id="memory"><h2>Memory</h2>',
        "<p class=muted>Per replayed run with a memory stream or a probe: how the news spread "
        "and what the interviews after the last step found (a yes counts as knowing only when "
        "the agent's memory names the news), then each agent's stream over time with its "
        "importance (1-10, <em>fallback</em> where the rating did not parse) and the steps "
        "whose prompts showed it, and each reflection's tree of evidence.</p>",
    ]
    if cells and sum(c.get("n") or 0 for c in cells) > 1:
        parts.append(cells_paper_table(cells))
    for n, run in enumerate(runs):
        rep = "" if run.get("repetition") is None else f" · #{e(run['repetition'])}"
        body = party_block(run.get("party")) + streams_block(run.get("browse"))
        parts.append(
            f"<details{' open' if n == 0 else ''}><summary><strong>{e(run['id'])}</strong> "
            f"<span class=muted>{e(run['cell'])}{rep}</span></summary>{body}</details>"
        )
    if not runs:
        parts.append("<p class=muted>No replayed run has a memory stream or a probe.</p>")
    parts.append("</section>")
    return "\n".join(parts)


def party_block(party: dict | None) -> str:
    if not party:
        return ""
    parts = ["<h3>The probe</h3>", run_paper_table(party)]
    if not party.get("interviewed"):
        parts.append("<p class=muted>No interviews stored (the run has not finished).</p>")
    news = party.get("news")
    if news:
        parts.append(_news(news))
    rel = party.get("relationships")
    if rel:
        edges = ", ".join(f"{a}–{b}" for a, b in rel["edges"]) or "none"
        parts.append(
            f"<p><strong>Relationships:</strong> density {_share(rel['density'])} "
            f"(pairs who both know each other, backed by memory; one way: "
            f"{_share(rel['one_way_density'])}); {e(rel['said_yes'])} of {e(rel['asked'])} "
            f"answers said yes, {e(rel['unbacked_yes'])} with no memory of the other. "
            f"Edges: {e(edges)}.</p>"
        )
    att = party.get("attendance")
    if att:
        who = ", ".join(att["attended"]) or "nobody"
        reached = "" if att["reached"] else " (the run did not reach the gathering's hours)"
        knew = (
            f"; {e(att['knew_and_came'])} of them knew of it"
            if att.get("knew_and_came") is not None
            else ""
        )
        parts.append(
            f"<p><strong>Attendance:</strong> {e(att['count'])} ({e(who)}) at steps "
            f"{e(', '.join(map(str, att['steps'])) or '–')}{knew}{e(reached)}.</p>"
        )
    return "".join(parts)


def _news(news: dict) -> str:
    rows = "".join(
        f"<tr><td>{e(a['agent'])}</td>"
        f"<td>{'unclear (read as no)' if a.get('unclear') else _yes(a['said_yes'])}</td>"
        f"<td>{_yes(a['memory_mentions'])}</td><td>{_yes(a['knows'])}</td>"
        f"<td>{_yes(a['knew_at_start'])}</td><td class=pre>{e(a['answer'] or '–')}</td></tr>"
        for a in news["per_agent"]
    )
    steps = "".join(f"<th>{t}</th>" for t in range(len(news["remembered_by_step"])))
    spread = "".join(
        f"<tr><th>{e(label)}</th>" + "".join(f"<td class=num>{v}</td>" for v in values) + "</tr>"
        for label, values in (
            ("remembered", news["remembered_by_step"]),
            ("heard", news["heard_by_step"]),
        )
    )
    return (
        f"<p><strong>The news</strong> ({e(', '.join(news['keywords']))}): "
        f"{e(news['knows'])} of {e(len(news['per_agent']))} agents know of it at the end "
        f"({_share(news['known_share'])}; {e(news['knew_at_start'])} at the start); "
        f"{e(news['said_yes'])} said yes, {e(news['unbacked_yes'])} of them with no memory "
        f"of it; {e(news.get('unclear', 0))} answers said neither yes nor no (read as no).</p>"
        f'<table class="spread"><tr><th>step</th>{steps}</tr>{spread}</table>'
        "<table><tr><th>agent</th><th>said yes</th><th>memory names it</th><th>knows</th>"
        f"<th>knew at start</th><th>answer</th></tr>{rows}</table>"
    )


def _yes(value: bool | None) -> str:
    return "–" if value is None else ("yes" if value else "no")


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
