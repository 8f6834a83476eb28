"""A stored conversation on screen: coloured by role, day separators, summaries, exact prompts."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table

from simulator.cli.live import role_colour
from simulator.store.clock import as_datetime


def conversations_table(docs: list[dict]) -> Table:
    table = Table(title="Conversations")
    for column in (
        "",
        "id",
        "experiment",
        "owner",
        "status",
        "agents",
        "messages",
        "days",
        "speaker",
        "created",
    ):
        table.add_column(column)
    for doc in docs:
        spec = doc["spec"]
        agents = ", ".join(f"{n} {r}" for r, n in spec["agents"].items())
        counters = doc.get("counters") or {}
        created = as_datetime(doc["created_at"])
        table.add_row(
            "★" if doc.get("favourite") else "",
            doc["_id"],
            doc["experiment_id"],
            escape(doc["owner"]),
            doc["status"],
            escape(agents),
            f"{counters.get('messages', 0)}/{spec['total_messages']}",
            str(spec["days"]),
            spec["speaker_method"],
            f"{created:%Y-%m-%d %H:%M}",
        )
    return table


def show_transcript(console: Console, data: dict) -> None:
    conv = data["conversation"]
    roles: list[str] = [r["name"] for r in conv["experiment"]["roles"]]
    console.print(
        f"[bold]{conv['_id']}[/bold] of {conv['experiment_id']} — {conv['status']}"
        + (f" ({escape(conv['error'])})" if conv.get("error") else "")
    )
    console.print(
        "agents: "
        + ", ".join(
            f"[{role_colour(a['role'], roles)}]{escape(a['name'])}[/] ({escape(a['model'])})"
            for a in conv["agents"]
        )
    )
    summaries = {s["day"]: s["text"] for s in data["summaries"]}
    current_day = None
    for message in data["messages"]:
        if message["day"] != current_day:
            if current_day is not None and current_day in summaries:
                _summary(console, current_day, summaries[current_day])
            current_day = message["day"]
            console.print(Rule(f"Day {current_day}"))
        colour = role_colour(message["role"], roles)
        flags = " [dim](trimmed)[/]" if message.get("trimmed") else ""
        flags += " [dim](empty)[/]" if message.get("empty") else ""
        console.print(
            f"[bold {colour}]{escape(message['speaker'])}[/]: {escape(message['text'])}{flags}"
        )
    if current_day is not None and current_day in summaries:
        _summary(console, current_day, summaries[current_day])


def _summary(console: Console, day: int, text: str) -> None:
    console.print(Panel(escape(text), title=f"summary of day {day}", style="dim"))


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
            console.print(f"[bold]{message['role']}[/bold]: {escape(message['content'])}")
        if call.get("error"):
            console.print(f"[red]error:[/red] {escape(call['error'])}")
        else:
            console.print(f"[green]response:[/green] {escape(call.get('response') or '')}")
