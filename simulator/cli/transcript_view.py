"""A stored conversation on screen: coloured by role, day separators, summaries, exact prompts."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table

from simulator.cli.fit_table import Column, fitted_table
from simulator.cli.live import role_colour
from simulator.domain.clock import as_datetime
from simulator.domain.fork import point_text
from simulator.domain.invisible_chars import pieces
from simulator.domain.plural import count
from simulator.worlds.grid.domain.experiment import is_grid
from simulator.worlds.network.domain.experiment import THEORY, is_network


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
    """One conversation's fields as listings show them (a chat, a grid run, a network run)."""
    spec = doc["spec"]
    counters = doc.get("counters") or {}
    if is_grid(doc):
        return _grid_row(doc, spec, counters)
    if is_network(doc):
        return _network_row(doc, spec, counters)
    turns = sum(doc.get("day_split") or []) or spec["total_messages"]  # reference: 20 is 19 turns
    return {
        "star": "★" if doc.get("favourite") else "",
        "id": doc["_id"],
        "experiment": doc["experiment_id"],
        "owner": doc["owner"],
        "status": doc["status"],
        "agents": ", ".join(count(n, r) for r, n in spec["agents"].items()),
        # a fork's counter covers what it stored; the messages it shares are its parent's
        "messages": f"{counters.get('messages', 0) + (doc.get('fork_shared') or 0)}/{turns}",
        "days": str(spec["days"]),
        "speaker": spec["speaker_method"],
        "created": f"{as_datetime(doc['created_at']):%Y-%m-%d %H:%M}",
    }


def _grid_row(doc: dict, spec: dict, counters: dict) -> dict[str, str]:
    """A grid run in the conversations table: agents, steps done, world in place of speaker."""
    world = spec["world"]
    # a fork's counter covers what it stored; the steps it shares are its parent's
    done = (counters.get("messages", 0) + (doc.get("fork_shared") or 0)) // max(world["agents"], 1)
    return {
        "star": "★" if doc.get("favourite") else "",
        "id": doc["_id"],
        "experiment": doc["experiment_id"],
        "owner": doc["owner"],
        "status": doc["status"],
        "agents": f"{world['agents']} on a grid",
        "messages": f"step {done}/{world['steps']}",
        "days": "-",
        "speaker": f"grid r={world['radius']}",
        "created": f"{as_datetime(doc['created_at']):%Y-%m-%d %H:%M}",
    }


def _network_row(doc: dict, spec: dict, counters: dict) -> dict[str, str]:
    """A network run in the conversations table: agents, rounds done, graph as the speaker."""
    n, rounds = len(spec["agents"]), spec["settings"]["rounds"]
    done = (counters.get("messages", 0) + (doc.get("fork_shared") or 0)) // max(n, 1)
    return {
        "star": "★" if doc.get("favourite") else "",
        "id": doc["_id"],
        "experiment": doc["experiment_id"],
        "owner": doc["owner"],
        "status": doc["status"],
        "agents": f"{n} on a network",
        "messages": f"round {max(done - 1, 0)}/{rounds}",
        "days": "-",
        "speaker": f"network {spec['settings']['graph'].get('type')}"
        + (" · theory" if spec.get("model") == THEORY else ""),
        "created": f"{as_datetime(doc['created_at']):%Y-%m-%d %H:%M}",
    }


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
    conv = data["conversation"]
    if is_grid(conv):
        show_grid_steps(console, data)
        return
    if is_network(conv):
        show_network_rounds(console, data)
        return
    roles: list[str] = [r["name"] for r in conv["experiment"]["roles"]]
    console.print(
        f"[bold]{conv['_id']}[/bold] of {conv['experiment_id']} — {conv['status']}"
        + (f" ({shown(conv['error'])})" if conv.get("error") else "")
    )
    console.print(
        "agents: "
        + ", ".join(
            f"[{role_colour(a['role'], roles)}]{shown(a['name'])}[/] ({escape(a['model'])})"
            for a in conv["agents"]
        )
    )
    for line in lineage_lines(conv):
        console.print(line, markup=False, highlight=False)
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
        flags += " [bold](edited by the researcher)[/]" if message.get("edited") else ""
        if message.get("conversation_id", conv["_id"]) != conv["_id"]:
            flags += f" [dim](shared, stored in {escape(message['conversation_id'])})[/]"
        place = f"[dim][{message['day']}:{message['index']}][/] "
        console.print(
            f"{place}[bold {colour}]{shown(message['speaker'])}[/]: {shown(message['text'])}{flags}"
        )
    if current_day is not None and current_day in summaries:
        _summary(console, current_day, summaries[current_day])


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


def show_grid_steps(console: Console, data: dict) -> None:
    """A grid run step by step: each agent's cells, move, who heard it, message and memory."""
    run = data["conversation"]
    world = run["spec"]["world"]
    console.print(
        f"[bold]{run['_id']}[/bold] of {run['experiment_id']} — {run['status']}"
        + (f" ({shown(run['error'])})" if run.get("error") else "")
    )
    console.print(
        f"grid: {count(world['agents'], 'agent')} on {world['width']} x {world['height']}, "
        f"radius {world['radius']}, {count(world['steps'], 'step')}; model "
        f"{escape(run['spec']['llm']['model'])}"
    )
    for line in lineage_lines(run):
        console.print(line, markup=False, highlight=False)
    step = None
    for row in data.get("steps", []):
        if row["step"] != step:
            step = row["step"]
            console.print(Rule(f"Step {step}{_shared(row, run)}"))
        (x0, y0), (x1, y1) = row["position_before"], row["position_after"]
        flag = " [red](a fallback: the reply named no move)[/]" if row.get("move_fallback") else ""
        move = "-" if row.get("move_fallback") else row["move"]
        heard = ", ".join(row["heard_from"]) or "nobody"
        console.print(
            f"[bold cyan]{shown(row['agent'])}[/] ({x0},{y0}) {move} -> ({x1},{y1}){flag}"
            f" [dim]heard {escape(heard)}[/]"
        )
        console.print(f"  message: {shown(row['message'])}")
        console.print(f"  [dim]memory: {shown(row['memory'])}[/]")


def show_network_rounds(console: Console, data: dict) -> None:
    """A network run round by round: each agent's opinion, decision, attempts and thought."""
    run = data["conversation"]
    spec = run["spec"]
    console.print(
        f"[bold]{run['_id']}[/bold] of {run['experiment_id']} — {run['status']}"
        + (f" ({shown(run['error'])})" if run.get("error") else "")
    )
    console.print(
        f"network: {count(len(spec['agents']), 'agent')}, graph "
        f"{spec['settings']['graph'].get('type')}, scenario {escape(spec['scenario']['name'])}, "
        f"{count(spec['settings']['rounds'], 'round')}; "
        + (
            "the coevolution theory (no model)"
            if spec.get("llm") is None
            else f"model {escape(spec['llm']['model'])}"
        )
    )
    for line in lineage_lines(run):
        console.print(line, markup=False, highlight=False)
    current = None
    for row in data.get("rounds", []):
        if row["round"] != current:
            current = row["round"]
            table = " (the agents table)" if not current else ""
            console.print(Rule(f"Round {current}{table}{_shared(row, run)}"))
        flag = " [red](no reply parsed: previous answer kept)[/]" if row["answer_fallback"] else ""
        tries = f" [dim]{row['attempts']} tries[/]" if row["attempts"] > 1 else ""
        exact = f" [dim](exactly {row['exact_opinion']:g})[/]" if "exact_opinion" in row else ""
        console.print(
            f"[bold cyan]{shown(row['agent'])}[/] opinion {row['opinion']}{exact} "
            f"{row['decision']}{flag}{tries}"
        )
        if "said" in row:  # a free-chat round: the message it wrote to its friends
            console.print(f"  [italic]said to its friends:[/] {shown(row['said'])}")
        if row["thought"]:
            console.print(f"  [dim]{shown(row['thought'])}[/]")


def _shared(row: dict, run: dict) -> str:
    """' (shared, stored in X)' for a fork's step (round) read from its ancestor X."""
    owner = row.get("conversation_id", run["_id"])
    return "" if owner == run["_id"] else f" (shared, stored in {owner})"


def _summary(console: Console, day: int, text: str) -> None:
    console.print(Panel(shown(text), title=f"summary of day {day}", style="dim"))


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
        else:
            console.print(f"[green]response:[/green] {shown(call.get('response'))}")
