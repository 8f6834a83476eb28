"""Creating an experiment by answering questions, in the reference tool's order.

Each answer is one step function over a `Draft`, so a validation error can send the user back
to exactly the answer at fault; nothing reaches the store before "Save?".
"""

from __future__ import annotations

from collections.abc import Callable

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.cli.interactive.llms import ask_llms, edit_llms
from simulator.cli.render import rendered_prompts
from simulator.domain.yaml_io import validate_model
from simulator.errors import UserError
from simulator.services import experiments as service
from simulator.worlds.chat.cli.draft import Draft
from simulator.worlds.chat.domain.experiment import NAME_PATTERN, Experiment
from simulator.worlds.chat.prompting.assembly import render_all

PRONOUNS = ("he", "she", "it", "they")


def step_name(draft: Draft, editing: bool) -> None:
    draft.name = ask.ask_required("Experiment name", draft.name)


def show_legend(draft: Draft) -> None:
    """The placeholders the text may use, with their values for one agent and for two, as the
    reference tool printed them before each section text."""
    if legend := draft.placeholder_legend():
        ask.console.print(legend, markup=False, highlight=False)


def step_starting_message(draft: Draft, editing: bool) -> None:
    show_legend(draft)
    draft.starting_message = ask.text_block(
        "Starting message (opens every conversation)",
        draft.starting_message,
        required=True,
        check=draft.placeholder_problem,
    )


def step_llms(draft: Draft, editing: bool) -> None:
    draft.llms = edit_llms(draft.llms) if editing and draft.llms else ask_llms(draft.llms)


def step_sections(draft: Draft, editing: bool) -> None:
    """Titles first, then which are shared; at least one stays private (the starting prompt)."""
    draft.titles = ask.ask_names("Section titles", "Section title", draft.titles)
    if len(draft.titles) == 1:
        draft.shared = []
    else:
        draft.shared = ask.checkbox(
            "Which sections are shared by every role?",
            draft.titles,
            checked=[t for t in draft.shared if t in draft.titles],
            check=lambda picked: (
                "keep at least one section private: the first private one is "
                "each role's starting prompt"
                if len(picked) == len(draft.titles)
                else None
            ),
        )
    if editing:
        fill_missing(draft)


def _role_name_problem(name: str) -> str | None:
    if NAME_PATTERN.match(name):
        return None
    return (
        f"role name {name!r} must start with a letter and use letters, digits, spaces, "
        "'-', '_' or apostrophes"
    )


def step_roles(draft: Draft, editing: bool) -> None:
    names = ask.ask_names(
        "Role names", "Role name", [n for n, _ in draft.roles], check=_role_name_problem
    )
    current = dict(draft.roles)
    roles = []
    for index, name in enumerate(names):
        default = current.get(name) or (
            draft.roles[index][1] if index < len(draft.roles) else "they"
        )
        choices = [(p, p) for p in PRONOUNS]
        roles.append((name, ask.select(f"Pronoun for {name}", choices, default=default)))
    draft.set_roles(roles)
    # the starting message was typed before any role existed: check its placeholders now
    problem = draft.starting_message and draft.placeholder_problem(draft.starting_message)
    if problem:
        ask.warn(f"starting message: {problem}")
        step_starting_message(draft, editing)
    if editing:
        fill_missing(draft)


def step_summarizer(draft: Draft, editing: bool) -> None:
    draft.summarizer_titles = ask.ask_names(
        "Summarizer section titles (none: no daily summary)",
        "Summarizer section title",
        draft.summarizer_titles,
        minimum=0,
    )
    if editing:
        fill_missing(draft)


def step_favourite(draft: Draft, editing: bool) -> None:
    draft.favourite = ask.confirm("Mark as one of your favourites?", draft.favourite)


def step_note(draft: Draft, editing: bool) -> None:
    draft.note = ask.text("Note (optional)", draft.note)


def step_contents(draft: Draft, editing: bool) -> None:
    """At creation every section in turn; when changing, the one section the user picks."""
    if not editing:
        fill_missing(draft)
        return
    slot = ask.select("Which section?", [(draft.label(s), s) for s in draft.slots()])
    edit_content(draft, slot)


def fill_missing(draft: Draft) -> None:
    """Every missing section text, after one legend of the placeholders (as the reference)."""
    missing = draft.missing()
    if missing:
        show_legend(draft)
    for slot in missing:
        edit_content(draft, slot, legend=False)


def edit_content(draft: Draft, slot: tuple[str, str, str], legend: bool = True) -> None:
    if legend:
        show_legend(draft)
    draft.contents[slot] = ask.text_block(
        draft.heading(slot),
        draft.contents.get(slot, ""),
        check=draft.placeholder_problem,
        note=draft.label(slot),
    )


Step = Callable[[Draft, bool], None]
STEPS: dict[str, tuple[str, Step]] = {
    "name": ("Name", step_name),
    "starting_message": ("Starting message", step_starting_message),
    "llms": ("LLMs", step_llms),
    "sections": ("Section titles and which are shared", step_sections),
    "roles": ("Roles and pronouns", step_roles),
    "summarizer": ("Summarizer sections", step_summarizer),
    "favourite": ("Favourite", step_favourite),
    "note": ("Note", step_note),
    "contents": ("Section contents", step_contents),
}


def fix(draft: Draft, error: UserError) -> None:
    """Show a validation error and re-ask the answer the user picks (the culprit by default)."""
    ask.show_error(error)
    step, slot = draft.blame(error.render())
    choices: list[tuple[str, object]] = []
    if slot is not None and slot in draft.contents:
        choices.append((f"Change: {draft.label(slot)}", slot))
    choices += [(f"Change: {label}", key) for key, (label, _) in STEPS.items()]
    choices.append(("Cancel (discard this experiment)", "cancel"))
    default = slot if slot is not None and slot in draft.contents else step
    picked = ask.select("Which answer do you want to change?", choices, default=default)
    if picked == "cancel":
        raise ask.Cancelled
    if isinstance(picked, tuple):
        edit_content(draft, picked)
    else:
        STEPS[picked][1](draft, True)


def validated(draft: Draft) -> Experiment:
    while True:
        try:
            return validate_model(draft.to_data(), Experiment, "experiment")
        except UserError as error:
            fix(draft, error)


def preview(app: AppContext, experiment: Experiment) -> None:
    """The prompts as agents will receive them, for counts the user picks (1 per role default)."""
    counts = {}
    for role in experiment.roles:
        counts[role.name] = ask.ask_int(f"Agents of role {role.name} for the preview", 1, 99, 1)
    rendered_prompts(app.console, render_all(experiment, counts), counts)


def run_create(app: AppContext) -> None:
    draft = Draft()
    for _, step in STEPS.values():
        step(draft, False)
    while True:
        experiment = validated(draft)
        preview(app, experiment)
        answer = ask.select(
            "Save?",
            [
                ("Yes, save it", "save"),
                ("Change an answer", "change"),
                ("No, discard it", "discard"),
            ],
        )
        if answer == "discard":
            app.console.print("Nothing saved.")
            return
        if answer == "save":
            break
        key = ask.select("Which answer?", [(label, key) for key, (label, _) in STEPS.items()])
        STEPS[key][1](draft, True)
    view = service.create(app.store, experiment, app.user)
    app.console.print(f"Created experiment {view.id} ({view.experiment.name}).", markup=False)
