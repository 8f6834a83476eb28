"""Stored runs on screen: the conversations table, one run's heading and lineage (its world's
views show its messages, steps or rounds), and the exact prompts of its calls."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.rule import Rule
from rich.table import Table

from simulator.cli.fit_table import Column, fitted_table
from simulator.cli.view_parts import views_for
from simulator.domain.clock import as_datetime
from simulator.domain.embedding_rows import is_embedding
from simulator.domain.fork import point_text
from simulator.domain.invisible_chars import pieces


def shown(text: str | None) -> str:
    """Rich markup for stored text: escaped, with each invisible character (U+202E, zero-width,
    C0/C1 controls) as a reversed marker such as ⟨U+202E⟩, so none can hide or reorder text."""
    return "".join(
        f"[reverse]{chunk}[/reverse]" if is_marker else escape(chunk)
        for chunk, is_marker in pieces(text or "")
    )


COLUMNS = [  # dropped on a narrow screen: days first, then created, speaker, owner, agents
    Column("star", ""),
    Column("id", "id"),
    Column("experiment", "experiment", drop=6),
    Column("owner", "owner", shrink_to=8, drop=4),
    Column("status", "status"),
    Column("agents", "agents", shrink_to=12, drop=5),
    Column("messages", "messages"),
    Column("days", "days", drop=1),
    Column("speaker", "speaker", shrink_to=10, drop=3),
    Column("created", "created", drop=2),
]


def listing_row(doc: dict) -> dict[str, str]:
    """One conversation's fields as listings show them (a chat, a grid run, a network run):
    what every run has, and the cells its world fills (agents, progress, days, speaker)."""
    cells = views_for(doc).listing_cells(doc)
    return {
        "star": "★" if doc.get("favourite") else "",
        "id": doc["_id"],
        "experiment": doc["experiment_id"],
        "owner": doc["owner"],
        "status": doc["status"],
        "agents": cells["agents"],
        "messages": cells["messages"],
        "days": cells["days"],
        "speaker": cells["speaker"],
        "created": f"{as_datetime(doc['created_at']):%Y-%m-%d %H:%M}",
    }


def stored_count(doc: dict) -> int:
    """How many messages (a grid's or network's: agent turns) a run has, counting a fork's
    shared ones: its counter covers what it stored, the rest are its parent's."""
    return (doc.get("counters") or {}).get("messages", 0) + (doc.get("fork_shared") or 0)


def conversations_table(docs: list[dict], width: int) -> Table:
    """One line per conversation within `width` cells; long fields end in an ellipsis, ids stay
    whole, and the least needed columns are left out when the screen is narrow."""
    return fitted_table("Conversations", COLUMNS, [listing_row(doc) for doc in docs], width)


def natural_width(console: Console, renderable: object) -> int:
    """The width `renderable` takes when nothing has to wrap (Measurement alone is clamped to
    the screen, so it cannot tell whether a table fits)."""
    options = console.options.update_width(100_000)
    return Measurement.get(console, options, renderable).maximum


def print_conversations(console: Console, docs: list[dict]) -> None:
    console.print(conversations_table(docs, console.width))


def show_transcript(console: Console, data: dict) -> None:
    """A stored run: its heading, its agents (world), where it comes from, then its rows."""
    run = data["conversation"]
    views = views_for(run)
    console.print(
        f"[bold]{run['_id']}[/bold] of {run['experiment_id']} — {run['status']}"
        + (f" ({shown(run['error'])})" if run.get("error") else "")
    )
    console.print(views.run_line(run))
    for line in lineage_lines(run):
        console.print(line, markup=False, highlight=False)
    views.show_rows(console, data)


def lineage_lines(conv: dict) -> list[str]:
    """Where a run comes from: the run it replays, the message it was forked at."""
    lines = []
    if conv.get("fork_of"):
        where = point_text(conv.get("fork_at"))
        edit = " with the researcher's text there" if conv.get("fork_edit") else ""
        repetition = conv.get("fork_repetition")
        group = conv.get("fork_group")
        which = f" (continuation {repetition} of group {group})" if repetition else ""
        lines.append(f"fork of {conv['fork_of']} at {where}{edit}{which}")
    if conv.get("replay_of"):
        lines.append(f"replay of {conv['replay_of']}")
    return lines


def unit_rows(
    console: Console, data: dict, unit: str, note: Callable[[object], str] = lambda _: ""
) -> Iterator[dict]:
    """A run's rows (a grid's steps, a network's rounds: `data[unit + "s"]`), with a rule
    printed before the first row of each `unit` ("Step 3", plus `note` and, for a fork's
    row read from its ancestor, where it is stored)."""
    run = data["conversation"]
    current = None
    for row in data.get(f"{unit}s", []):
        if row[unit] != current:
            current = row[unit]
            console.print(Rule(f"{unit.capitalize()} {current}{note(current)}{_shared(row, run)}"))
        yield row


def _shared(row: dict, run: dict) -> str:
    """' (shared, stored in X)' for a fork's step (round) read from its ancestor X."""
    owner = row.get("conversation_id", run["_id"])
    return "" if owner == run["_id"] else f" (shared, stored in {owner})"


def show_prompts(console: Console, calls: list[dict]) -> None:
    for call in calls:
        who = call.get("agent") or call["purpose"]
        head = (
            f"call {call['seq']} · {call['purpose']} · day {call['day']} · {who} · "
            f"{call['model']} · "
            f"attempt {call['attempt']}"
        )
        console.print(Rule(escape(head)))
        for message in call["messages"]:
            console.print(f"[bold]{message['role']}[/bold]: {shown(message['content'])}")
        if call.get("error"):
            console.print(f"[red]error:[/red] {shown(call['error'])}")
        elif is_embedding(call):
            texts = len(call["messages"])
            console.print(f"[green]embedded:[/green] {texts} texts, one vector each")
        else:
            console.print(f"[green]response:[/green] {shown(call.get('response'))}")
