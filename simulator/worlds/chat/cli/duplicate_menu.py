"""A group chat's 'Duplicate and update' entry: a copy the user owns, after changing any
answers the creation flow asks (simulator/worlds/chat/cli/create_menu.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.domain.yaml_io import validate_model
from simulator.errors import UserError
from simulator.services import experiments as service
from simulator.services.experiments import ExperimentView
from simulator.worlds.chat.cli.create_menu import STEPS, preview
from simulator.worlds.chat.cli.draft import Draft
from simulator.worlds.chat.domain.experiment import Experiment

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
