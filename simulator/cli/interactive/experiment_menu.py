"""What can be done with one selected experiment.

The menu is built from `MenuEntry` rows (label, handler): the entries every experiment has, and
those its world's views part adds (simulator/cli/view_parts.py), so a world offers its own
flows (performing its runs, editing a copy) without this loop naming it.
"""

from __future__ import annotations

import re
from pathlib import Path

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.cli.interactive.conversation_menu import browse
from simulator.cli.render import experiment_detail
from simulator.cli.view_parts import BACK, Handler, MenuEntry, optional, views_of
from simulator.errors import UserError
from simulator.services import experiments as service
from simulator.services.experiments import ExperimentView

__all__ = ["BACK", "Handler", "MenuEntry", "entries_for", "run_experiment_menu"]


def show(app: AppContext, view: ExperimentView) -> None:
    app.console.print(experiment_detail(view))


def export(app: AppContext, view: ExperimentView) -> None:
    """Write the same YAML as `llm-sim experiment export -o PATH`."""
    slug = re.sub(r"[^a-z0-9]+", "_", view.experiment.name.lower()).strip("_") or view.id
    path = Path(ask.ask_required("Export to which YAML file?", f"{slug}.yaml")).expanduser()
    if path.exists() and not ask.confirm(f"{path} exists. Overwrite it?", default=False):
        app.console.print("Nothing exported.")
        return
    text = service.export_yaml(app.store, view.id, app.user)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(
            f"cannot write {path} ({exc.strerror})", fix="choose a writable path"
        ) from None
    app.console.print(f"Exported {view.id} to {path}.", markup=False)


def update(app: AppContext, view: ExperimentView) -> None:
    """The favourite flag is each user's own; the note only its owner may change."""
    exp = view.experiment
    favourite = ask.confirm("Mark as one of your favourites?", default=exp.favourite)
    note = None
    if view.owner == app.user:
        note = ask.text("Note", exp.note)
    else:
        app.console.print(f"Only its owner {view.owner} may change the note.", markup=False)
    if favourite == exp.favourite and note in (None, exp.note):
        app.console.print("Nothing changed.")
        return
    service.update(
        app.store,
        view.id,
        app.user,
        note=None if note == exp.note else note,
        favourite=None if favourite == exp.favourite else favourite,
    )
    app.console.print(f"Updated {view.id}.")


def delete(app: AppContext, view: ExperimentView) -> str | None:
    if view.owner != app.user:
        app.console.print(
            f"Experiment {view.id} belongs to {view.owner}; only its owner may delete it. "
            "You can duplicate it instead.",
            markup=False,
        )
        return None
    counts = service.deletion_counts(app.store, view.id, app.user)
    if not ask.confirm(service.delete_question(view, counts), default=False):
        app.console.print("Nothing deleted.")
        return None
    done = service.delete(app.store, view.id, app.user)
    app.console.print(service.deleted_message(view.id, done), markup=False)
    return BACK


def foreign_notice(app: AppContext) -> None:
    """Under the experiment list: how many of the reference tool's experiments and
    conversations were left out, and the command that imports them."""
    note = service.foreign_note(app.store)
    if note:
        app.console.print(note, markup=False)


def entries_for(view: ExperimentView) -> list[MenuEntry]:
    """What every experiment offers, with its world's entries: those that change a copy after
    Show, those that perform its runs before Conversations."""
    views = views_of(view.kind)
    return [
        MenuEntry("Show", show),
        *optional(views, "EDIT_ENTRIES"),
        MenuEntry("Update (favourite, note)", update, others_label="Update (favourite)"),
        MenuEntry("Export to YAML", export),
        MenuEntry("Delete", delete, owner_only=True),
        *views.RUN_ENTRIES,
        MenuEntry("Conversations", browse),
    ]


def run_experiment_menu(app: AppContext, experiment_id: str) -> None:
    """Loop until Back (or Ctrl-C at this menu); Ctrl-C inside an entry returns here."""
    while True:
        view = service.get(app.store, experiment_id, app.user)
        star = " ★" if view.experiment.favourite else ""
        mine = view.owner == app.user
        choices: list[tuple[str, MenuEntry | str]] = [
            (e.label_for(mine), e) for e in entries_for(view) if mine or not e.owner_only
        ]
        choices.append(("Back", BACK))
        try:
            picked = ask.select(f"Experiment {view.id}: {view.experiment.name}{star}", choices)
        except ask.Cancelled:
            return
        if picked == BACK:
            return
        try:
            outcome = picked.handler(app, view)
        except (ask.Cancelled, KeyboardInterrupt):
            app.console.print("Cancelled.")
            continue
        except UserError as error:
            ask.show_error(error)
            continue
        if outcome == BACK:
            return
        if outcome:
            experiment_id = outcome
