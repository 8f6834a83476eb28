"""What can be done with one selected experiment.

The menu is built from `ENTRIES`, a list of (label, handler) pairs, so later features
(performing conversations, browsing them) append an entry instead of editing this loop.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.cli.interactive.conversation_menu import browse, perform
from simulator.cli.interactive.create import STEPS, preview
from simulator.cli.interactive.draft import Draft
from simulator.cli.interactive.sweep_menu import perform_sweep
from simulator.cli.render import experiment_detail
from simulator.domain.experiment import Experiment
from simulator.domain.limits import MAX_SEED
from simulator.domain.yaml_io import validate_model
from simulator.errors import UserError
from simulator.services import experiments as service
from simulator.services.experiments import ExperimentView
from simulator.worlds.grid.cli.run import run_grid_cli
from simulator.worlds.grid.domain.experiment import MAX_GRID_AGENTS, MAX_GRID_SIDE, MAX_GRID_STEPS
from simulator.worlds.network.cli.run import run_network_cli
from simulator.worlds.network.domain.experiment import THEORY
from simulator.worlds.network.domain.scenario import MAX_ROUNDS

BACK = "back"
# A handler gets the app and the current view; it returns None to stay on this experiment,
# BACK to leave the menu (e.g. after deleting it), or another experiment id to switch to.
Handler = Callable[[AppContext, ExperimentView], str | None]


@dataclass
class MenuEntry:
    label: str
    handler: Handler
    owner_only: bool = False  # not offered to other users (the service refuses them anyway)
    others_label: str | None = None  # the label other users see, where they may do less

    def label_for(self, owner: bool) -> str:
        return self.label if owner or self.others_label is None else self.others_label


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


COPY_FIELDS = (
    "starting_message",
    "llms",
    "roles",
    "shared_sections",
    "summarizer_sections",
    "note",
)


def duplicate(app: AppContext, view: ExperimentView) -> str | None:
    """Copy into one the user owns, after changing any answers the creation flow asks."""
    draft = Draft.from_experiment(view.experiment)
    draft.name = f"{view.experiment.name} (copy)"
    edits = [
        (key, STEPS[key])
        for key in (
            "name",
            "starting_message",
            "llms",
            "sections",
            "roles",
            "summarizer",
            "contents",
            "note",
        )
    ]
    current = "save"
    while True:
        choices = [(f"Change: {label}", key) for key, (label, _) in edits]
        choices += [
            ("Preview the prompts", "preview"),
            ("Save the copy", "save"),
            ("Cancel", "cancel"),
        ]
        picked = ask.select(f"Duplicate of {view.id} as {draft.name!r}", choices, default=current)
        current = "save"
        if picked == "cancel":
            app.console.print("Nothing copied.")
            return None
        if picked == "preview":
            current = _preview(app, draft)
        elif picked != "save":
            draft = _change(draft, STEPS[picked][1])
        else:
            data = draft.to_data()
            try:
                made = service.duplicate(
                    app.store,
                    view.id,
                    app.user,
                    name=draft.name,
                    changes={key: data[key] for key in COPY_FIELDS},
                )
            except UserError as error:
                ask.show_error(error)
                current = draft.blame(error.render())[0]
                continue
            app.console.print(
                f"Created copy {made.id} ({made.experiment.name}); now showing your copy.",
                markup=False,
            )
            return made.id


def _change(draft: Draft, step: Callable[[Draft, bool], None]) -> Draft:
    """Run one change on a copy; Ctrl-C half-way leaves the draft as it was, back at this menu."""
    changed = copy.deepcopy(draft)
    try:
        step(changed, True)
    except ask.Cancelled:
        ask.console.print("Change cancelled.")
        return draft
    return changed


def _preview(app: AppContext, draft: Draft) -> str:
    """Render the draft's prompts; on a validation error, the menu entry to fix it next."""
    try:
        preview(app, validate_model(draft.to_data(), Experiment, "experiment"))
    except ask.Cancelled:
        pass
    except UserError as error:
        ask.show_error(error)
        return draft.blame(error.render())[0]
    return "save"


def perform_grid(app: AppContext, view: ExperimentView) -> None:
    """One grid run, its world numbers offered with the experiment's values."""
    world = view.experiment.world
    choices = [(llm.key, llm.key) for llm in view.experiment.llms]
    llm = ask.select("Model", choices) if len(choices) > 1 else choices[0][1]
    changes = {
        "agents": ask.ask_int("Number of agents", 1, MAX_GRID_AGENTS, world.agents),
        "steps": ask.ask_int("Steps", 1, MAX_GRID_STEPS, world.steps),
        "radius": ask.ask_int("Message range", 0, 2 * MAX_GRID_SIDE, world.radius),
    }
    seed = ask.ask_int("Seed, blank for none", 0, MAX_SEED, None, optional=True)
    run_grid_cli(app, view, llm=llm, seed=seed, world=changes, as_json=False)


def perform_network(app: AppContext, view: ExperimentView) -> None:
    """One network run, its rounds offered with the experiment's value."""
    net = view.experiment.network
    choices = [(llm.key, llm.key) for llm in view.experiment.llms]
    choices.append(("The coevolution theory (no model; the LLM runs' twin)", THEORY))
    llm = ask.select("Model", choices)
    rounds = ask.ask_int("Rounds after round 0", 1, MAX_ROUNDS, net.rounds)
    seed = ask.ask_int("Seed, blank for none", 0, MAX_SEED, None, optional=True)
    theory = llm == THEORY
    run_network_cli(
        app,
        view,
        llm=None if theory else llm,
        seed=seed,
        settings={"rounds": rounds},
        as_json=False,
        theory=theory,
    )


ENTRIES: list[MenuEntry] = [
    MenuEntry("Show", show),
    MenuEntry("Duplicate and update", duplicate),
    MenuEntry("Update (favourite, note)", update, others_label="Update (favourite)"),
    MenuEntry("Export to YAML", export),
    MenuEntry("Delete", delete, owner_only=True),
    MenuEntry("Perform conversation", perform),
    MenuEntry("Perform conversations (sweep)", perform_sweep),
    MenuEntry("Conversations", browse),
]

GRID_ENTRIES: list[MenuEntry] = [  # a grid experiment: no roles to draft, runs not chats
    MenuEntry("Show", show),
    MenuEntry("Update (favourite, note)", update, others_label="Update (favourite)"),
    MenuEntry("Export to YAML", export),
    MenuEntry("Delete", delete, owner_only=True),
    MenuEntry("Perform a grid run", perform_grid),
    MenuEntry("Conversations", browse),
]

NETWORK_ENTRIES: list[MenuEntry] = [  # an opinion network: sweeps from a YAML file (CLI)
    MenuEntry("Show", show),
    MenuEntry("Update (favourite, note)", update, others_label="Update (favourite)"),
    MenuEntry("Export to YAML", export),
    MenuEntry("Delete", delete, owner_only=True),
    MenuEntry("Perform a network run", perform_network),
    MenuEntry("Conversations", browse),
]


def entries_for(view: ExperimentView) -> list[MenuEntry]:
    if view.kind == "grid":
        return GRID_ENTRIES
    return NETWORK_ENTRIES if view.kind == "network" else ENTRIES


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
