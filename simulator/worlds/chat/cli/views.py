"""How the screens show a group chat (simulator/cli/view_parts.py): its roles and sections, a
conversation's messages day by day with the day summaries, and its menus."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from simulator.cli.live import role_colour
from simulator.cli.transcript_view import shown, stored_count
from simulator.cli.view_parts import CreateFlow, MenuEntry
from simulator.domain.plural import count

if TYPE_CHECKING:  # a listing reads these views: the experiments' validation loads when used
    from simulator.cli.context import AppContext
    from simulator.services.experiments import ExperimentView
    from simulator.worlds.chat.domain.experiment import Experiment


# The menus (and the run engine they start) load when chosen, not with every listing that
# reads these views.
def _create(app: AppContext) -> None:
    from simulator.worlds.chat.cli.create_menu import run_create

    run_create(app)


def _duplicate(app: AppContext, view: ExperimentView) -> str | None:
    from simulator.worlds.chat.cli.duplicate_menu import duplicate

    return duplicate(app, view)


def _perform(app: AppContext, view: ExperimentView) -> None:
    from simulator.worlds.chat.cli.perform_menu import perform

    perform(app, view)


def _perform_sweep(app: AppContext, view: ExperimentView) -> None:
    from simulator.worlds.chat.cli.sweep_menu import perform_sweep

    perform_sweep(app, view)


CREATE = (CreateFlow("Create experiment", _create),)
EDIT_ENTRIES = (MenuEntry("Duplicate and update", _duplicate),)
RUN_ENTRIES = (
    MenuEntry("Perform conversation", _perform),
    MenuEntry("Perform conversations (sweep)", _perform_sweep),
)
PICKER_PROGRESS = "{} messages"


def roles_cell(view: ExperimentView) -> str:
    return ", ".join(r.name for r in view.experiment.roles)


def detail(view: ExperimentView) -> list[RenderableType]:
    """The starting message, each role's sections, the shared and summarizer sections."""
    exp = view.experiment
    parts: list[RenderableType] = [Panel(escape(exp.starting_message), title="starting message")]
    for role in exp.roles:
        titles = ", ".join(s.title for s in role.sections)
        parts.append(Text(f"role {role.name} ({role.pronoun}): {titles}"))
    if exp.shared_sections:
        parts.append(Text("shared sections: " + ", ".join(s.title for s in exp.shared_sections)))
    if exp.summarizer_sections:
        parts.append(
            Text("summarizer sections: " + ", ".join(s.title for s in exp.summarizer_sections))
        )
    return parts


def listing_cells(doc: dict) -> dict[str, str]:
    spec = doc["spec"]
    turns = sum(doc.get("day_split") or []) or spec["total_messages"]  # reference: 20 is 19 turns
    return {
        "agents": ", ".join(count(n, r) for r, n in spec["agents"].items()),
        "messages": f"{stored_count(doc)}/{turns}",
        "days": str(spec["days"]),
        "speaker": spec["speaker_method"],
    }


def _roles(run: dict) -> list[str]:
    return [r["name"] for r in run["experiment"]["roles"]]


def run_line(run: dict) -> str:
    roles = _roles(run)
    return "agents: " + ", ".join(
        f"[{role_colour(a['role'], roles)}]{shown(a['name'])}[/] ({escape(a['model'])})"
        for a in run["agents"]
    )


def show_rows(console: Console, data: dict) -> None:
    """The messages day by day, coloured by role, each day's summary after it."""
    conv = data["conversation"]
    roles = _roles(conv)
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


def _summary(console: Console, day: int, text: str) -> None:
    console.print(Panel(shown(text), title=f"summary of day {day}", style="dim"))


def rendered(experiment: Experiment, text: str) -> tuple[dict[str, int], dict[str, str]]:
    """`experiment show --render guard=2,prisoner=1`: the agents per role, and every prompt as
    they read it."""
    from simulator.worlds.chat.services import roles

    counts = roles.parse_counts(text, experiment)
    return counts, roles.render(experiment, counts)
