"""The interactive menu `llm-sim` (or `python main.py`) opens when no command is given.

Login happens first: hooks on the AppContext let the store ask for a MongoDB password and the
user resolution ask for a name, both only here, never in the non-interactive commands.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.markup import escape

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.cli.interactive.experiment_menu import foreign_notice, run_experiment_menu
from simulator.cli.interactive.import_menu import run_import_reference
from simulator.cli.view_parts import create_flows
from simulator.errors import UserError
from simulator.identity import USER_PATTERN, remember_user
from simulator.services import experiments as service

EXIT = "exit"


@dataclass
class MainEntry:
    label: str
    handler: Callable[[AppContext], None]


def _ask_password() -> str:
    """Used when DB_USER and DB_CLUSTER_URL are set without DB_PASSWORD; hidden, never logged."""
    return ask.password(f"MongoDB password for {os.environ.get('DB_USER', 'the database user')}")


def _ask_user(app: AppContext) -> Callable[[], str]:
    def ask_name() -> str:
        name = ask.ask_required(
            "Your name",
            check=lambda n: (
                None
                if USER_PATTERN.match(n)
                else "use 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter/digit"
            ),
        )
        path = remember_user(name)
        app.console.print(
            f"Hello {name}. Your name (nothing else) is remembered in {path}, so next time you "
            "are logged in automatically.",
            markup=False,
        )
        return name

    return ask_name


def _pick_database(names: list[str], default: str) -> str:
    """The server's databases to pick from, as the reference tool offered them at login."""
    choices = [(name, name) for name in names]
    if default not in names:
        choices.append((f"{default} (new)", default))
    return ask.select("Which database?", choices, default=default)


def login(app: AppContext) -> str:
    """Set the hooks before anything touches `app.store` or `app.user`, then resolve the user."""
    app.interactive = True
    app.ask_password = _ask_password
    app.ask_user = _ask_user(app)
    app.pick_database = _pick_database
    return app.user


def _choice_label(view: service.ExperimentView, user: str) -> str:
    exp = view.experiment
    owner = f"{view.owner} (you)" if view.owner == user else view.owner
    note = " ".join(exp.note.split())
    note = note if len(note) <= 60 else note[:59] + "…"
    star = "★" if exp.favourite else " "
    return f"{star} {exp.name} — {owner}" + (f" — {note}" if note else "") + f"  [{view.id}]"


def select_experiment(app: AppContext) -> None:
    """Favourites first, then newest (the order `experiment list` uses)."""
    views = service.list_views(app.store, app.user)
    if not views:
        app.console.print(
            "No experiments yet: create one, or import prompts/experiments/prison.yaml."
        )
        foreign_notice(app)
        return
    foreign_notice(app)
    choices = [(_choice_label(v, app.user), v.id) for v in views] + [("Back", "")]
    picked = ask.select("Which experiment?", choices)
    if picked:
        run_experiment_menu(app, picked)


def import_yaml(app: AppContext) -> None:
    path = Path(ask.ask_required("Path of the YAML file")).expanduser()
    view = service.import_yaml(app.store, path, app.user)
    app.console.print(f"Created experiment {view.id} ({view.experiment.name}).", markup=False)


def show_info(app: AppContext) -> None:
    from simulator.cli.commands.info import info_data

    for key, value in info_data(app).items():
        app.console.print(f"[bold]{key.replace('_', ' ')}[/bold]: {escape(str(value))}")


def main_entries() -> list[MainEntry]:
    """Each world's create flows (in the registry's order), then what works for every world."""
    return [
        *(MainEntry(flow.label, flow.run) for flow in create_flows()),
        MainEntry("Select experiment", select_experiment),
        MainEntry("Import from YAML", import_yaml),
        MainEntry("Import from the reference tool", run_import_reference),
        MainEntry("Info", show_info),
    ]


def main_menu(app: AppContext) -> None:
    """Loop until Exit or Ctrl-C here; Ctrl-C or a UserError inside a flow returns here."""
    while True:
        choices = [(e.label, e) for e in main_entries()] + [("Exit", EXIT)]
        try:
            picked = ask.select("What do you want to do?", choices)
        except ask.Cancelled:
            picked = EXIT
        if picked == EXIT:
            app.console.print("Bye.")
            return
        try:
            picked.handler(app)
        except (ask.Cancelled, KeyboardInterrupt):
            app.console.print("Cancelled.")
        except UserError as error:
            ask.show_error(error)


def run_interactive(app: AppContext) -> None:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError(
            "the interactive menu needs a terminal",
            fix="run it in a terminal, or use the commands (llm-sim --help)",
        )
    try:
        user = login(app)
    except (ask.Cancelled, KeyboardInterrupt):
        app.console.print("Bye.")
        return
    app.console.print(f"Logged in as {user}.", markup=False)
    main_menu(app)
