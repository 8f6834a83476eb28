"""A run's memory streams in a report: what each agent remembered (its stream over time with
importance, and when each record was shown to it) and its reflection trees (thought ->
evidence). A world's report puts them in its own memory section (a grid's beside its party).

Data comes from browser.py (`MemoryBrowse`, the CLI browser's own); everything a model wrote
is escaped with `e`. Static HTML: no script.
"""

from __future__ import annotations

from simulator.analysis.report.html import e
from simulator.memory.analysis.browser import EvidenceNode, MemoryBrowse

FALLBACK = " <em>fallback</em>"  # a rating that did not parse (4 used)
RECORDS_SHOWN = 300  # per agent; a long run's stream is summarised beyond this


def streams_block(browse: MemoryBrowse | None) -> str:
    if browse is None:
        return ""
    parts = ["<h3>Memory streams</h3>"]
    for agent in browse.agents:
        thoughts = sum(r.type == "thought" for r in agent.stream)
        shown = agent.stream[:RECORDS_SHOWN]
        rows = "".join(
            f"<tr><td>{e(browse.time(r.created))}</td><td>{e(r.type)}</td>"
            f"<td class=num>{e(r.importance)}{FALLBACK if r.importance_fallback else ''}</td>"
            f"<td class=pre>{e(r.text)}</td>"
            f"<td>{e(', '.join(map(str, agent.retrieved_at.get(r.id, []))) or '–')}</td></tr>"
            for r in shown
        )
        more = len(agent.stream) - len(shown)
        note = f"<p class=muted>{more} later records not shown.</p>" if more else ""
        trees = "".join(f"<ul class=tree>{_tree(browse, t)}</ul>" for t in agent.trees())
        parts.append(
            f"<details><summary>{e(agent.name)} <span class=muted>{len(agent.stream)} records, "
            f"{thoughts} thoughts</span></summary>"
            f"<table><tr><th>time</th><th>type</th><th>importance</th><th>memory</th>"
            f"<th>shown at {e(browse.step_word)}s</th></tr>{rows}</table>{note}"
            + (f"<h4>Reflection trees</h4>{trees}" if trees else "")
            + "</details>"
        )
    return "".join(parts)


def _tree(browse: MemoryBrowse, node: EvidenceNode) -> str:
    r = node.record
    if r is None:
        return f"<li class=muted>{e(node.id)} (not stored)</li>"
    if node.repeated:
        return f"<li class=muted>{e(r.text)} (above)</li>"
    below = "".join(_tree(browse, child) for child in node.evidence)
    return (
        f"<li><span class=muted>{e(r.type)} · {e(browse.time(r.created))} · "
        f"{e(r.importance)}</span> {e(r.text)}" + (f"<ul>{below}</ul>" if below else "") + "</li>"
    )
