"""The report's Branches section: the tree of forks, and per fork point the branches side by
side from the point (the parent's column first, the shared prefix once above) with their
measures, then the branches grouped by the agents' model: the same opening continued by each.

Data comes from branches_context.py; everything a model or a researcher wrote is escaped with
`e`. Static HTML: no script (columns scroll sideways; long texts fold in a <details>).
"""

from __future__ import annotations

from simulator.analysis.report.branches_context import MAX_COLUMNS, REPLIES_SHOWN
from simulator.analysis.report.html import e, fmt

CUT = 600  # characters of a message shown before "more" (the rest folds in a <details>)
REPLY_CUT = 200  # the by-model table: each first reply on one line, this long, then "more"
CSS = """
.branch-tree, .branch-tree ul { list-style: none; margin: 4px 0; padding-left: 18px; }
.branch-tree { padding-left: 0; }
.branch-tree li { margin: 2px 0; }
.fork-point > .at { font-weight: 600; color: #8a5a00; }
.badge { font-size: 11px; padding: 0 5px; border-radius: 3px; background: #fde9c8;
  color: #6b4500; margin-left: 6px; }
.badge.outside { background: #e6e9ee; color: var(--muted); }
.sbs-wrap { overflow: auto; max-height: 900px; border: 1px solid var(--line); }
table.side-by-side { margin: 0; table-layout: fixed; }
table.side-by-side th, table.side-by-side td { width: 320px; min-width: 320px; }
table.side-by-side th.place, table.side-by-side td.place { width: 56px; min-width: 56px;
  position: sticky; left: 0; background: #f0f3f6; z-index: 1; }
table.side-by-side thead th { position: sticky; top: 0; z-index: 2; }
table.side-by-side .parent { background: #f4f7fb; }
table.side-by-side td.edited { background: #fff6e5; }
.who { font-weight: 600; }
.shared { border-left: 3px solid var(--line); padding-left: 8px; margin: 6px 0; }
.replies { margin: 0; padding-left: 18px; }
tr.parent-row td { background: #f4f7fb; }
"""


def branches_section(data: dict) -> str:
    parts = [
        f'<section id="branches"><h2>Branches</h2><style>{CSS}</style>',
        "<p class=muted>A fork shares its parent's messages before its fork point and stores "
        "only its own from there: a branch's messages, measures and export rows start at the "
        "fork point (a researcher's edit counts as its first message, with no model call). "
        "The parent's column is measured from the same point.</p>",
        "<h3>Tree of branches</h3>",
        '<ul class="branch-tree" id="branch-tree">',
        *(_tree_node(node) for node in data["tree"]),
        "</ul>",
    ]
    if data.get("plain"):
        parts.append(
            f"<p class=muted>{e(data['plain'])} conversations without forks are left out.</p>"
        )
    for n, view in enumerate(data["points"]):
        parts.append(_point(view, data["measures"], n))
    left = data["n_points"] - len(data["points"])
    if left > 0:
        parts.append(f"<p class=muted>{left} more fork points are in the tree only.</p>")
    parts.append("</section>")
    return "\n".join(parts)


def _describe(node: dict) -> str:
    badges = ' <span class="badge">edited</span>' if node.get("edited") else ""
    if node.get("outside"):
        badges += ' <span class="badge outside">not in this scope</span>'
    return (
        f"<code>{e(node['id'])}</code> · {e(node['models'])} · seed {e(node['seed'])} · "
        f"{e(node['status'])} · {e(node['n'])} messages{badges}"
    )


def _tree_node(node: dict) -> str:
    points = "".join(
        f'<li class="fork-point" data-at="{e(p["at"])}"><span class="at">at {e(p["at"])}</span>'
        f" <span class=muted>{_count(len(p['branches']), 'branch', 'branches')}"
        + "".join(f" · edit: “{e(_short(t, 120))}”" for t in p["edits"])
        + "</span><ul>"
        + "".join(_tree_node(b) for b in p["branches"])
        + "</ul></li>"
        for p in node["points"]
    )
    kind = "branch" if node.get("fork") else "root"
    return (
        f'<li class="branch-node {kind}" data-conversation="{e(node["id"])}">{_describe(node)}'
        + (f"<ul>{points}</ul>" if points else "")
        + "</li>"
    )


def _point(view: dict, names: list[str], n: int) -> str:
    parent = view["parent"]
    title = (
        f"From {e(view['at'])} of <code>{e(parent['id'])}</code> "
        f"<span class=muted>{_count(view['n_branches'], 'branch', 'branches')}</span>"
    )
    return (
        f'<details class="fork-view" data-at="{e(view["at"])}" data-parent="{e(parent["id"])}"'
        f"{' open' if n == 0 else ''}><summary><strong>{title}</strong></summary>"
        + _shared(view)
        + _side_by_side(view, names)
        + _by_model(view, names)
        + "</details>"
    )


def _shared(view: dict) -> str:
    total, shown = view["shared_total"], view["shared"]
    earlier = total - len(shown)
    lines = "".join(
        f'<div class="shared"><span class=muted>[{e(m["day"])}:{e(m["index"])}]</span> '
        f'<span class="who">{e(m.get("speaker"))}</span> {_text(m.get("text"))}</div>'
        for m in shown
    )
    note = f"<p class=muted>{earlier} earlier messages not shown.</p>" if earlier else ""
    return (
        f"<details open><summary>Shared before {e(view['at'])}: "
        f"{_count(total, 'message', 'messages')}</summary>"
        f"{note}{lines}</details>"
    )


def _side_by_side(view: dict, names: list[str]) -> str:
    columns = view["columns"]
    heads = "".join(
        f'<th class="{"parent" if i == 0 else "branch"}" data-conversation="{e(c["id"])}">'
        f"{'parent ' if i == 0 else ''}<code>{e(c['id'])}</code><br>"
        f"<span class=muted>{e(c['models'])} · seed {e(c['seed'])} · {e(c['status'])}</span>"
        + (' <span class="badge">edited</span>' if c.get("edited") else "")
        + "</th>"
        for i, c in enumerate(columns)
    )
    rows = "".join(
        f'<tr><td class="place">{e(place)}</td>'
        + "".join(_cell(m, i == 0) for i, m in enumerate(cells))
        + "</tr>"
        for place, cells in zip(view["places"], view["grid"], strict=True)
    )
    measures = "".join(
        f'<tr class="measure"><td class="place" title="{e(name)}">{e(_short(name, 14))}</td>'
        + "".join(
            f'<td class="num{" parent" if i == 0 else ""}">{fmt(c["measures"].get(name))}</td>'
            for i, c in enumerate(columns)
        )
        + "</tr>"
        for name in names
    )
    notes = []
    if view["columns_left_out"]:
        notes.append(
            f"The first {MAX_COLUMNS} of {view['n_branches']} branches are shown side by side; "
            f"the other {view['columns_left_out']} are in the tree, the table by model and "
            "the transcripts."
        )
    if view["rows_left_out"]:
        notes.append(f"{view['rows_left_out']} later places are not shown.")
    return (
        "<h3>Side by side from the fork point</h3>"
        + "".join(f"<p class=muted>{e(text)}</p>" for text in notes)
        + '<div class="sbs-wrap"><table class="side-by-side">'
        f'<thead><tr><th class="place">place</th>{heads}</tr></thead>'
        f"<tbody>{rows}</tbody><tfoot>{measures}</tfoot></table></div>"
    )


def _cell(message: dict | None, parent: bool) -> str:
    if message is None:
        return f'<td class="{"parent" if parent else ""}"><span class=muted>–</span></td>'
    classes = ["parent"] if parent else []
    edited = ""
    if message.get("edited"):
        classes.append("edited")
        edited = (
            '<span class="badge">researcher\'s edit</span>'
            f"<div class=muted>replaces: {_text(message.get('original_text'))}</div>"
        )
    return (
        f'<td class="{" ".join(classes)}"><span class="who">{e(message.get("speaker"))}</span> '
        f"<span class=muted>{e(message.get('role'))}</span>{edited}"
        f"<div>{_text(message.get('text'))}</div></td>"
    )


def _by_model(view: dict, names: list[str]) -> str:
    heads = "".join(f"<th>{e(name)}</th>" for name in names)
    rows, lists = [], []
    for group in view["by_model"]:
        cells = "".join(_stat(*group["stats"][name]) for name in names)
        parent = group.get("parent")
        kind = "parent-row" if parent else "model-row"
        label = f"{'parent: ' if parent else ''}{e(group['model'])}"
        rows.append(
            f'<tr class="{kind}" data-model="{e(group["model"])}">'
            f'<td>{label}</td><td class="num">{e(group["n"])}</td>{cells}</tr>'
        )
        lists.append(f"<p><b>{label}</b></p>{_replies(group['replies'])}")
    return (
        "<h3>By model: the same opening continued by each</h3>"
        "<p class=muted>Per agents' model, its branches from this point: mean ± standard "
        "deviation over its repetitions, then each repetition's first reply after the fork "
        "point (after the edit, when there is one). The parent's row is its one run from the "
        "same point.</p>"
        '<div class="scroll"><table class="cross-model"><tr><th>model</th><th>n</th>'
        f"{heads}</tr>{''.join(rows)}</table></div>"
        f'<div class="first-replies">{"".join(lists)}</div>'
    )


def _replies(replies: list) -> str:
    """Each repetition's first reply after the fork point, one line each."""
    shown = replies[:REPLIES_SHOWN]
    items = "".join(
        f"<li><code>{e(cid)}</code>"
        + (f" #{e(rep)}" if rep is not None else "")
        + f" <span class=muted>seed {e(seed)}</span>: "
        + (_reply(m.get("text")) if m and m.get("text") else _missing(m))
        + "</li>"
        for cid, rep, seed, m in shown
    )
    if len(replies) > len(shown):
        items += f"<li class=muted>{len(replies) - len(shown)} more</li>"
    return f'<ul class="replies">{items}</ul>'


def _stat(mean: float | None, sd: float | None, n: int) -> str:
    spread = f'<span class="ci">± {fmt(sd)}</span>' if sd is not None else ""
    return f'<td class="num">{fmt(mean)}{spread}</td>'


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _short(text: object, limit: int) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _missing(message: dict | None) -> str:
    if message is None:
        return "<span class=muted>no reply stored</span>"
    trimmed = " (empty after trimming)" if message.get("trimmed") else " (empty)"
    return f"<span class=muted>{e(message.get('speaker'))}{trimmed}</span>"


def _reply(text: object) -> str:
    """A first reply in the by-model table: its whitespace folded to single spaces, so ten
    replies of a model that repeats a line stay ten lines; the whole text folds below."""
    text = "" if text is None else str(text)
    line = " ".join(text.split())
    if len(line) <= REPLY_CUT:
        return e(line)
    return (
        f"{e(line[:REPLY_CUT])}…<details><summary>the whole reply ({len(text):,} characters)"
        f'</summary><span class="pre">{e(text)}</span></details>'
    )


def _text(text: object) -> str:
    """A message's text, escaped; past CUT characters the rest folds in a <details>."""
    text = "" if text is None else str(text)
    if len(text) <= CUT:
        return f'<span class="pre">{e(text)}</span>'
    return (
        f'<span class="pre">{e(text[:CUT])}</span><details><summary>{len(text) - CUT:,} more '
        f'characters</summary><span class="pre">{e(text[CUT:])}</span></details>'
    )
